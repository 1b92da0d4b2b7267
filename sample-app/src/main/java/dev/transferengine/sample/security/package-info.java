/**
 * Who may call the sample's HTTP API and actuator: a bearer token shared by the nodes of one deployment.
 */
@NullMarked
package dev.transferengine.sample.security;

import org.jspecify.annotations.NullMarked;
