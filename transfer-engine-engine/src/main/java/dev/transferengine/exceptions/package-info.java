/**
 * The typed errors of the transfer engine: {@link dev.transferengine.exceptions.TransferEngineException} and its
 * subclasses, one per way an operation or a configuration can fail. Each names the problem it reports.
 */
@NullMarked
package dev.transferengine.exceptions;

import org.jspecify.annotations.NullMarked;
