/**
 * Internal, not API: the machinery every engine shares (the agent core with its progress
 * loop, notification dispatch, registration and transfer bookkeeping) and the driver
 * interface an engine implements. Public types here are not promised to users and may
 * change at any time.
 */
@NullMarked
package dev.nixl4j.internal.engine;

import org.jspecify.annotations.NullMarked;
