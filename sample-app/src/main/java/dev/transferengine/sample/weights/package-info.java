/** Weight push: a trainer scatters its weights to inference nodes through a peer group. */
@NullMarked
package dev.transferengine.sample.weights;

import org.jspecify.annotations.NullMarked;
