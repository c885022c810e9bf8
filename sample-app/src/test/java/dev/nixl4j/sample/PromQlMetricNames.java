package dev.nixl4j.sample;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression selects, found by a small tokenizer rather than a
 * full parser: an identifier is a metric name unless it calls a function (followed by
 * {@code (}), is a keyword or an aggregation's name, or stands inside label matchers
 * ({@code {...}}), a range or subquery ({@code [...]}), a grouping list
 * ({@code by (...)}, {@code on (...)}, ...) or a string. Grafana variables
 * ({@code $agent}, {@code ${agent}}, {@code [[agent]]}) are skipped.
 */
final class PromQlMetricNames {

	private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "atan2", "inf", "nan");

	private static final Set<String> GROUPINGS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right");

	private static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar",
			"count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio");

	private static final Pattern LABEL_VALUES = Pattern
		.compile("^\\s*label_values\\s*\\((.*),\\s*[a-zA-Z_]\\w*\\s*\\)\\s*$", Pattern.DOTALL);

	private static final Pattern QUERY_RESULT = Pattern.compile("^\\s*query_result\\s*\\((.*)\\)\\s*$", Pattern.DOTALL);

	private final String expression;

	private int position;

	private PromQlMetricNames(String expression) {
		this.expression = expression;
	}

	/**
	 * Returns the metric names an expression selects, in the order they first appear.
	 * @param expression a PromQL expression
	 * @return the names
	 * @throws IllegalArgumentException if a string, label matcher, range or parenthesis
	 * is not closed, naming the expression and the position
	 */
	static Set<String> of(String expression) {
		return new PromQlMetricNames(expression).names();
	}

	/**
	 * Returns the metric names a Grafana query variable of the Prometheus data source
	 * selects: {@code label_values(<expression>, <label>)},
	 * {@code query_result(<expression>)}, or none for {@code label_values(<label>)},
	 * {@code label_names()} and {@code metrics(...)}.
	 * @param query the variable's query
	 * @return the names
	 */
	static Set<String> ofVariableQuery(String query) {
		Matcher labelValues = LABEL_VALUES.matcher(query);
		if (labelValues.matches()) {
			return of(labelValues.group(1));
		}
		Matcher queryResult = QUERY_RESULT.matcher(query);
		if (queryResult.matches()) {
			return of(queryResult.group(1));
		}
		return Set.of();
	}

	private Set<String> names() {
		Set<String> names = new LinkedHashSet<>();
		int depth = 0;
		while (this.position < this.expression.length()) {
			char c = this.expression.charAt(this.position);
			if (Character.isWhitespace(c)) {
				this.position++;
			}
			else if (c == '"' || c == '\'' || c == '`') {
				skipString();
			}
			else if (c == '#') {
				skipComment();
			}
			else if (c == '{') {
				skipTo('}');
			}
			else if (c == '[') {
				skipTo(']');
			}
			else if (c == '$') {
				skipVariable();
			}
			else if (c == '(') {
				depth++;
				this.position++;
			}
			else if (c == ')') {
				if (--depth < 0) {
					throw failure("a ')' that closes nothing");
				}
				this.position++;
			}
			else if (isIdentifierStart(c)) {
				identifier(names);
			}
			else if (Character.isDigit(c) || c == '.') {
				skipNumber();
			}
			else {
				this.position++;
			}
		}
		if (depth > 0) {
			throw failure(depth + " '(' not closed");
		}
		return names;
	}

	private void identifier(Set<String> names) {
		int start = this.position;
		while (this.position < this.expression.length() && isIdentifierPart(this.expression.charAt(this.position))) {
			this.position++;
		}
		String word = this.expression.substring(start, this.position);
		char next = nextSignificant();
		String lowerCase = word.toLowerCase(Locale.ROOT);
		boolean grouping = GROUPINGS.contains(lowerCase);
		if (grouping && next == '(') {
			this.position = this.expression.indexOf('(', this.position);
			skipTo(')');
		}
		boolean name = !grouping && next != '(' && !KEYWORDS.contains(lowerCase)
				&& !(AGGREGATIONS.contains(lowerCase) && isGroupingNext());
		if (name) {
			names.add(word);
		}
	}

	private boolean isGroupingNext() {
		int at = this.position;
		while (at < this.expression.length() && Character.isWhitespace(this.expression.charAt(at))) {
			at++;
		}
		int start = at;
		while (at < this.expression.length() && isIdentifierPart(this.expression.charAt(at))) {
			at++;
		}
		String word = this.expression.substring(start, at).toLowerCase(Locale.ROOT);
		return word.equals("by") || word.equals("without");
	}

	private char nextSignificant() {
		for (int at = this.position; at < this.expression.length(); at++) {
			char c = this.expression.charAt(at);
			if (!Character.isWhitespace(c)) {
				return c;
			}
		}
		return 0;
	}

	private void skipString() {
		char quote = this.expression.charAt(this.position);
		int start = this.position++;
		while (this.position < this.expression.length()) {
			char c = this.expression.charAt(this.position++);
			if (c == '\\' && quote != '`') {
				this.position++;
			}
			else if (c == quote) {
				return;
			}
		}
		this.position = start;
		throw failure("a string not closed");
	}

	private void skipTo(char close) {
		int start = this.position++;
		while (this.position < this.expression.length()) {
			char c = this.expression.charAt(this.position);
			if (c == '"' || c == '\'' || c == '`') {
				skipString();
			}
			else if (c == close) {
				this.position++;
				return;
			}
			else {
				this.position++;
			}
		}
		this.position = start;
		throw failure("a '" + this.expression.charAt(start) + "' not closed by '" + close + "'");
	}

	private void skipComment() {
		int end = this.expression.indexOf('\n', this.position);
		this.position = (end < 0) ? this.expression.length() : end + 1;
	}

	private void skipVariable() {
		this.position++;
		if (this.position < this.expression.length() && this.expression.charAt(this.position) == '{') {
			skipTo('}');
			return;
		}
		while (this.position < this.expression.length() && isIdentifierPart(this.expression.charAt(this.position))) {
			this.position++;
		}
	}

	private void skipNumber() {
		while (this.position < this.expression.length()) {
			char c = this.expression.charAt(this.position);
			if (!Character.isLetterOrDigit(c) && c != '.' && c != '_') {
				return;
			}
			this.position++;
		}
	}

	private IllegalArgumentException failure(String what) {
		return new IllegalArgumentException(
				"PromQL expression has " + what + " at position " + this.position + ": " + this.expression);
	}

	private static boolean isIdentifierStart(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
	}

	private static boolean isIdentifierPart(char c) {
		return isIdentifierStart(c) || (c >= '0' && c <= '9');
	}

}
