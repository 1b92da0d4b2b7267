/**
 * The {@code moe} role: MoE dispatch and combine (module {@code transfer-engine-moe}) with the starter's engine as the
 * dispatcher and expert ranks on engines of their own, one layer per tick, every layer checked against the reference.
 */
@NullMarked
package dev.transferengine.sample.moe;

import org.jspecify.annotations.NullMarked;
