/** Native access shared by the transports: library loading, errno capture, CPU affinity. */
@NullMarked
package dev.transferengine.nativeaccess;

import org.jspecify.annotations.NullMarked;
