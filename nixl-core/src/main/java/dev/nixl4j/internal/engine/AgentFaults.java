package dev.nixl4j.internal.engine;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.AgentState;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * Logs, counts and acts on what an agent's internal threads report: the progress loop and
 * the engine's own threads. A thread that keeps failing logs its stack trace at most once
 * a second; the rest are counted. A fatal fault turns the agent
 * {@link AgentState#FAILED}.
 */
final class AgentFaults implements EngineDriver.FaultListener {

	// the agent's logger: what users configure for an agent
	private static final System.Logger logger = System.getLogger(AgentCore.class.getName());

	private static final long LOG_INTERVAL_NANOS = 1_000_000_000L;

	private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

	private final String agentName;

	private final AgentOpenState lifecycle;

	private final AgentStatisticsCounter statistics;

	private final NotificationDispatcher notifications;

	/** The agent's open transfers, of which those in progress are aborted on failure. */
	private final Set<TransferImpl> transfers;

	AgentFaults(String agentName, AgentOpenState lifecycle, AgentStatisticsCounter statistics,
			NotificationDispatcher notifications, Set<TransferImpl> transfers) {
		this.agentName = agentName;
		this.lifecycle = lifecycle;
		this.statistics = statistics;
		this.notifications = notifications;
		this.transfers = transfers;
	}

	@Override
	public void survived(String thread, Throwable error) {
		this.statistics.internalError();
		long now = System.nanoTime();
		Long last = this.lastLogged.get(thread);
		if (last == null || now - last >= LOG_INTERVAL_NANOS) {
			this.lastLogged.put(thread, now);
			logger.log(Level.ERROR, "Agent '" + this.agentName + "': one unit of work of its " + thread
					+ " thread failed; the thread goes on (errors so far: " + this.statistics.internalErrors() + ")",
					error);
		}
	}

	@Override
	public void fatal(String thread, Throwable error) {
		this.statistics.internalError();
		fail(thread, error);
	}

	/**
	 * Turns the agent {@link AgentState#FAILED}: from now on posts and notification waits
	 * are refused, transfers in flight fail and notification waiters fail at once. Only
	 * the first call counts.
	 */
	private void fail(String thread, Throwable error) {
		NixlException failed = new NixlException(NixlStatus.FAILED, "agent", this.agentName, null,
				"its " + thread + " thread cannot go on (" + error + ")", error);
		if (!this.lifecycle.failed(thread, failed)) {
			return;
		}
		// waiters and transfers first: logging goes through the application's handlers,
		// which may
		// throw as well
		this.notifications.failWaiters(failed);
		// abort() ends a transfer only while it is in progress
		for (TransferImpl transfer : List.copyOf(this.transfers)) {
			try {
				transfer.abort(failed);
			}
			catch (Throwable ex) {
				// a listener threw after the transfer ended: the next transfer must still
				// end
				survived(thread, ex);
			}
		}
		logger.log(Level.ERROR, "Agent '" + this.agentName + "' failed and can no longer move data: its " + thread
				+ " thread cannot go on. Close the agent and create a new one.", error);
	}

}
