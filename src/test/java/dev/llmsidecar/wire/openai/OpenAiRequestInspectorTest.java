package dev.llmsidecar.wire.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class OpenAiRequestInspectorTest {

    final OpenAiRequestInspector inspector = new OpenAiRequestInspector(new JsonFactory());

    InspectedRequest inspect(String body, boolean inject) {
        return inspector.inspect(Buffer.buffer(body), inject);
    }

    @Test
    void injectsStreamOptionsWhenAbsentAndKeepsEveryOtherByte() {
        String body = "{ \"model\" : \"m-1\", \"stream\": true,\n \"messages\":[{\"role\":\"user\",\"content\":\"hé\"}] }";
        InspectedRequest r = inspect(body, true);
        assertThat(r.model()).isEqualTo("m-1");
        assertThat(r.stream()).isTrue();
        assertThat(r.usageInjected()).isTrue();
        assertThat(r.upstreamBody().toString()).isEqualTo("{\"stream_options\":{\"include_usage\":true}, \"model\" : \"m-1\","
                + " \"stream\": true,\n \"messages\":[{\"role\":\"user\",\"content\":\"hé\"}] }");
        assertThat(new JsonObject(r.upstreamBody()).getJsonObject("stream_options").getBoolean("include_usage")).isTrue();
    }

    @Test
    void addsIncludeUsageInsideExistingStreamOptions() {
        InspectedRequest r = inspect("{\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true},\"model\":\"m\"}", true);
        assertThat(r.upstreamBody().toString()).isEqualTo(
                "{\"stream\":true,\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true},\"model\":\"m\"}");
        r = inspect("{\"stream\":true,\"stream_options\":{ }}", true);
        assertThat(r.upstreamBody().toString()).isEqualTo("{\"stream\":true,\"stream_options\":{\"include_usage\":true }}");
    }

    @Test
    void flipsExplicitFalseAndReplacesNull() {
        assertThat(inspect("{\"stream\":true,\"stream_options\":{\"include_usage\":false}}", true).upstreamBody().toString())
                .isEqualTo("{\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertThat(inspect("{\"stream\":true,\"stream_options\":null}", true).upstreamBody().toString())
                .isEqualTo("{\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
    }

    @Test
    void leavesTheBodyAloneWhenNotStreamingAlreadyAskedOrDisabled() {
        for (String body : new String[] {"{\"model\":\"m\",\"stream\":false}", "{\"model\":\"m\"}",
            "{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
            "{\"model\":\"m\",\"stream\":true,\"stream_options\":\"bad\"}"}) {
            InspectedRequest r = inspect(body, true);
            assertThat(r.usageInjected()).as(body).isFalse();
            assertThat(r.upstreamBody().toString()).isEqualTo(body);
        }
        InspectedRequest asked = inspect("{\"stream\":true,\"stream_options\":{\"include_usage\":true}}", true);
        assertThat(asked.clientAskedUsage()).isTrue();
        InspectedRequest off = inspect("{\"stream\":true}", false);
        assertThat(off.usageInjected()).isFalse();
        assertThat(off.stream()).isTrue();
    }

    @Test
    void invalidJsonIsPassedThroughUntouched() {
        for (String body : new String[] {"not json", "[1,2]", "{\"model\":\"m\"", "{\"stream\":true} trailing", ""}) {
            InspectedRequest r = inspect(body, true);
            assertThat(r.decodable()).as(body).isFalse();
            assertThat(r.usageInjected()).isFalse();
            assertThat(r.upstreamBody().toString()).isEqualTo(body);
        }
    }
}
