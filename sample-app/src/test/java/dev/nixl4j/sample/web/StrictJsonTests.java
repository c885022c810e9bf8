package dev.nixl4j.sample.web;

import java.util.List;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.PrefillRequest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The sample's JSON settings: a request must have its record's types, nothing is coerced.
 */
class StrictJsonTests {

	private final JsonMapper json = strict();

	private static JsonMapper strict() {
		JsonMapper.Builder builder = JsonMapper.builder();
		SampleWebConfiguration.StrictJson.configure(builder);
		return builder.build();
	}

	@Test
	void requestsOfTheRightTypesAreRead() {
		assertThat(this.json.readValue("{\"prompt\":\"hi\",\"maxTokens\":4,\"decodeDelayMillis\":10}",
				GenerateRequest.class))
			.isEqualTo(new GenerateRequest(null, "hi", null, 4, 10L));
		assertThat(this.json.readValue("{\"requestId\":\"r\",\"tokens\":[1,2]}", PrefillRequest.class))
			.isEqualTo(new PrefillRequest("r", null, List.of(1, 2)));
	}

	@Test
	void scalarsOfAnotherTypeAreRefusedNamingTheField() {
		for (String body : List.of("{\"prompt\":5}", "{\"prompt\":1.5}", "{\"prompt\":true}")) {
			assertThatExceptionOfType(MismatchedInputException.class).as(body)
				.isThrownBy(() -> this.json.readValue(body, GenerateRequest.class))
				.satisfies((ex) -> assertThat(ex.getPath().getFirst().getPropertyName()).isEqualTo("prompt"));
		}
		for (String body : List.of("{\"tokens\":[1.5]}", "{\"tokens\":[\"1\"]}", "{\"tokens\":[true]}")) {
			assertThatExceptionOfType(MismatchedInputException.class).as(body)
				.isThrownBy(() -> this.json.readValue(body, GenerateRequest.class))
				.satisfies((ex) -> assertThat(ex.getPath())
					.extracting((ref) -> ref.getPropertyName() + "/" + ref.getIndex())
					.containsExactly("tokens/-1", "null/0"));
		}
		assertThatExceptionOfType(MismatchedInputException.class)
			.isThrownBy(() -> this.json.readValue("{\"maxTokens\":\"4\"}", GenerateRequest.class));
		assertThatExceptionOfType(MismatchedInputException.class)
			.isThrownBy(() -> this.json.readValue("{\"decodeDelayMillis\":2.5}", GenerateRequest.class));
	}

	@Test
	void unknownFieldsAreRefused() {
		assertThatExceptionOfType(UnrecognizedPropertyException.class)
			.isThrownBy(() -> this.json.readValue("{\"prompts\":\"hi\"}", GenerateRequest.class))
			.satisfies((ex) -> assertThat(ex.getPropertyName()).isEqualTo("prompts"));
	}

}
