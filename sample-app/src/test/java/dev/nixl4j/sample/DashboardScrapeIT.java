package dev.nixl4j.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.nixl4j.sample.load.LoadGenerator;
import dev.nixl4j.sample.load.LoadOptions;
import dev.nixl4j.sample.load.LoadReport;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard ({@code docs/grafana/nixl4j-dashboard.json}, path in the system
 * property {@code dashboard.json}) against a live scrape: both workers of the sample,
 * started from the packaged jar, serve a short verified load, then every metric name in
 * the dashboard's queries (panels and variables) must be in {@code /actuator/prometheus}
 * of one of them. A failure lists every missing name with the panels that query it.
 */
class DashboardScrapeIT {

	private static final String PROMETHEUS_TEXT = "text/plain;version=0.0.4";

	@Test
	void everySeriesTheDashboardQueriesIsInTheScrapeOfBothWorkers() throws InterruptedException {
		Map<String, Set<String>> queried = queriedNames(dashboard());
		assertThat(queried).as("metric names in the dashboard's queries").hasSizeGreaterThan(10);
		Set<String> scraped = new TreeSet<>();
		try (SampleWorker prefill = SampleWorker.start("dashboard-prefill", "prefill", SampleWorker.freePort(),
				SampleWorker.TOKEN, "--nixl.agent.engine=embedded");
				SampleWorker decode = SampleWorker.start("dashboard-decode", "decode", SampleWorker.freePort(),
						SampleWorker.TOKEN, "--nixl.agent.engine=embedded",
						"--sample.decode.prefill-url=" + prefill.uri())) {
			LoadReport report = new LoadGenerator(LoadOptions.parse(new String[] { "--url", decode.uri().toString(),
					"--prefill", prefill.uri().toString(), "--requests", "6", "--concurrency", "2", "--prompt-tokens",
					"100", "--warmup", "1", "--wait", "30" }))
				.run();
			assertThat(report.failed()).isEmpty();
			assertThat(report.answers()).hasSize(6).allSatisfy((answer) -> assertThat(answer.verified()).isTrue());
			String decodeScrape = scrape(decode);
			assertThat(completedReads(decodeScrape)).as("decode's completed READs in its scrape").isEqualTo(7);
			scraped.addAll(seriesNames(scrape(prefill)));
			scraped.addAll(seriesNames(decodeScrape));
			assertThat(SampleWorker.stopAll(decode, prefill)).isEmpty();
		}
		List<String> problems = new ArrayList<>();
		queried.forEach((name, panels) -> {
			if (!scraped.contains(name)) {
				problems.add(name + " (queried by " + String.join(", ", panels) + ") is not in the scrape");
			}
		});
		assertThat(problems).as("dashboard queries against the scrape of " + scraped.size() + " series names")
			.isEmpty();
	}

	private static JsonNode dashboard() {
		String path = System.getProperty("dashboard.json");
		if (path == null || !Files.isRegularFile(Path.of(path))) {
			throw new IllegalStateException("the dashboard (system property dashboard.json = " + path
					+ ") is missing: run this test with Maven's verify phase (failsafe)");
		}
		try {
			return SampleWorker.JSON.readTree(Files.readString(Path.of(path)));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Every metric name in the dashboard's queries, with the titles of the panels (or
	 * names of the variables) that query it.
	 */
	static Map<String, Set<String>> queriedNames(JsonNode dashboard) {
		Map<String, Set<String>> queried = new LinkedHashMap<>();
		collectPanelQueries(dashboard.path("panels"), "(no title)", queried);
		for (JsonNode variable : dashboard.path("templating").path("list")) {
			if ("query".equals(variable.path("type").asString())) {
				JsonNode query = variable.path("query");
				String text = query.isObject() ? query.path("query").asString() : query.asString();
				for (String name : PromQlMetricNames.ofVariableQuery(text)) {
					queried.computeIfAbsent(name, (n) -> new LinkedHashSet<>())
						.add("variable $" + variable.path("name").asString());
				}
			}
		}
		return queried;
	}

	private static void collectPanelQueries(JsonNode node, String title, Map<String, Set<String>> queried) {
		if (node.isArray()) {
			for (JsonNode element : node) {
				collectPanelQueries(element, title, queried);
			}
		}
		else if (node.isObject()) {
			String here = node.path("title").isString() ? node.path("title").asString() : title;
			JsonNode expr = node.path("expr");
			if (expr.isString()) {
				for (String name : PromQlMetricNames.of(expr.asString())) {
					queried.computeIfAbsent(name, (n) -> new LinkedHashSet<>()).add("\"" + here + "\"");
				}
			}
			for (JsonNode child : node) {
				if (child.isContainer()) {
					collectPanelQueries(child, here, queried);
				}
			}
		}
	}

	private static String scrape(SampleWorker worker) {
		// the scrape names agents: the sample asks for the workers' token
		assertThat(worker.get("/actuator/prometheus", "Accept", PROMETHEUS_TEXT).statusCode())
			.as("GET /actuator/prometheus without the token on " + worker)
			.isEqualTo(401);
		String[] authorization = worker.authorization();
		HttpResponse<String> response = worker.get("/actuator/prometheus", "Accept", PROMETHEUS_TEXT, authorization[0],
				authorization[1]);
		assertThat(response.statusCode()).as("GET /actuator/prometheus on " + worker).isEqualTo(200);
		return response.body();
	}

	/** The names of the samples of a scrape in Prometheus's text format. */
	static Set<String> seriesNames(String scrape) {
		Set<String> names = new TreeSet<>();
		for (String line : scrape.split("\n")) {
			if (!line.isBlank() && !line.startsWith("#")) {
				int end = 0;
				while (end < line.length() && line.charAt(end) != '{' && line.charAt(end) != ' ') {
					end++;
				}
				names.add(line.substring(0, end));
			}
		}
		return names;
	}

	private static double completedReads(String scrape) {
		return scrape.lines()
			.filter((line) -> line.startsWith("nixl_transfers_total{") && line.contains("op=\"read\"")
					&& line.contains("outcome=\"completed\""))
			.mapToDouble((line) -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
			.sum();
	}

}
