/**
 * Serving the HTTP metadata registry from a servlet web application.
 */
@NullMarked
package dev.nixl4j.autoconfigure.web;

import org.jspecify.annotations.NullMarked;
