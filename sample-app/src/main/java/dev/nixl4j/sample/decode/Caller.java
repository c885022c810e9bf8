package dev.nixl4j.sample.decode;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

import jakarta.servlet.http.HttpServletRequest;

import dev.nixl4j.sample.WorkerToken;

/**
 * Who sends a {@code POST /generate}, as the decode worker's shares count it: a holder of
 * a worker's token (all together one caller, held only to the worker's total), or else
 * the address the request comes from: an IPv4 address, or the /64 prefix of an IPv6 one
 * (one host usually has a whole /64). The address is the connection's peer, as Tomcat
 * gives it: behind a proxy every caller is the proxy, unless Spring Boot's
 * {@code server.forward-headers-strategy} makes Tomcat take the client's address from a
 * trusted proxy's {@code X-Forwarded-For}.
 *
 * @param id the caller's identity, for example {@code "address 10.0.0.7"}
 * @param holdsToken whether it presented a worker's token
 */
record Caller(String id, boolean holdsToken) {

	/** Every holder of a worker's token. */
	static final Caller TOKEN_HOLDER = new Caller("the workers' token", true);

	/**
	 * The caller of a request.
	 * @param request the request, authenticated by the sample's filter when it presented
	 * a worker's token
	 * @return the caller
	 */
	static Caller of(HttpServletRequest request) {
		if (WorkerToken.isAuthenticated(request)) {
			return TOKEN_HOLDER;
		}
		return new Caller("address " + address(request.getRemoteAddr()), false);
	}

	/** The address a share counts by: the IPv4 address, or the IPv6 /64 prefix. */
	static String address(String remote) {
		InetAddress address;
		try {
			// a literal from the connection: no name is looked up
			address = InetAddress.ofLiteral(remote);
		}
		catch (IllegalArgumentException ex) {
			return remote;
		}
		if (address instanceof Inet6Address v6) {
			byte[] prefix = Arrays.copyOf(v6.getAddress(), 16);
			Arrays.fill(prefix, 8, 16, (byte) 0);
			try {
				return InetAddress.getByAddress(prefix).getHostAddress() + "/64";
			}
			catch (UnknownHostException ex) {
				return remote;
			}
		}
		return (address instanceof Inet4Address) ? address.getHostAddress() : remote;
	}

}
