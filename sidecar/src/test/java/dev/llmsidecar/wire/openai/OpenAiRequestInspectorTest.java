package dev.llmsidecar.wire.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class OpenAiRequestInspectorTest {

    final OpenAiRequestInspector inspector = new OpenAiRequestInspector(new JsonFactory());

    OpenAiRequest inspect(String body) {
        return inspector.inspect(Buffer.buffer(body));
    }

    @Test
    void describesTheIncludeUsageEditWhenAbsentAndKeepsEveryOtherByte() {
        String body = "{ \"model\" : \"m-1\", \"stream\": true,\n \"messages\":[{\"role\":\"user\",\"content\":\"hé\"}] }";
        OpenAiRequest r = inspect(body);
        assertThat(r.model()).isEqualTo("m-1");
        assertThat(r.stream()).isTrue();
        assertThat(r.usage()).isEqualTo(UsageRequest.ABSENT);
        assertThat(r.body().toString()).as("inspecting never changes the body").isEqualTo(body);
        assertThat(r.bodyWithUsage().toString()).isEqualTo("{\"stream_options\":{\"include_usage\":true}, \"model\" : \"m-1\","
                + " \"stream\": true,\n \"messages\":[{\"role\":\"user\",\"content\":\"hé\"}] }");
        assertThat(new JsonObject(r.bodyWithUsage()).getJsonObject("stream_options").getBoolean("include_usage")).isTrue();
    }

    @Test
    void readsVllmsIntegerPriorityAndNothingElseAsOne() {
        assertThat(inspect("{\"model\":\"m\",\"priority\":-3,\"stream\":true}").priority()).isEqualTo(-3);
        assertThat(inspect("{\"priority\":0}").priority()).isZero();
        for (String other : new String[] {"\"1\"", "1.5", "2147483648", "null", "[1]", "{\"p\":1}", "true"}) {
            OpenAiRequest r = inspect("{\"model\":\"m\",\"priority\":" + other + ",\"stream\":true}");
            assertThat(r.priority()).as(other).isNull();
            assertThat(r.model()).as(other).isEqualTo("m");
            assertThat(r.stream()).as(other).isTrue();
        }
        assertThat(inspect("{\"model\":\"m\"}").priority()).isNull();
    }

    @Test
    void fillsAnEmptyOrNullStreamOptions() {
        assertThat(inspect("{\"stream\":true,\"stream_options\":{ }}").bodyWithUsage().toString())
                .isEqualTo("{\"stream\":true,\"stream_options\":{\"include_usage\":true }}");
        assertThat(inspect("{\"stream\":true,\"stream_options\":null}").bodyWithUsage().toString())
                .isEqualTo("{\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
    }

    @Test
    void neverOverridesAnExplicitFalseNorTouchesOtherStreamOptions() {
        OpenAiRequest declined = inspect("{\"stream\":true,\"stream_options\":{\"include_usage\":false}}");
        assertThat(declined.usage()).isEqualTo(UsageRequest.DECLINED);
        assertThat(declined.usageEdit()).isNull();
        OpenAiRequest other = inspect("{\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true},\"model\":\"m\"}");
        assertThat(other.usage()).isEqualTo(UsageRequest.OTHER_OPTIONS);
        assertThat(other.usageEdit()).isNull();
        assertThat(inspect("{\"model\":\"m\",\"stream\":true,\"stream_options\":\"bad\"}").usage())
                .isEqualTo(UsageRequest.OTHER_OPTIONS);
        OpenAiRequest asked = inspect("{\"stream\":true,\"stream_options\":{\"include_usage\":true,\"x\":1}}");
        assertThat(asked.usage()).isEqualTo(UsageRequest.ASKED);
        assertThat(asked.usageEdit()).isNull();
    }

    @Test
    void aRequestThatDoesNotStreamHasNothingToEdit() {
        for (String body : new String[] {"{\"model\":\"m\",\"stream\":false}", "{\"model\":\"m\"}"}) {
            OpenAiRequest r = inspect(body);
            assertThat(r.usage()).as(body).isEqualTo(UsageRequest.NOT_APPLICABLE);
            assertThat(r.usageEdit()).isNull();
            assertThat(r.body().toString()).isEqualTo(body);
        }
    }

    @Test
    void invalidJsonIsPassedThroughUntouched() {
        for (String body : new String[] {"not json", "[1,2]", "{\"model\":\"m\"", "{\"stream\":true} trailing", ""}) {
            OpenAiRequest r = inspect(body);
            assertThat(r.decodable()).as(body).isFalse();
            assertThat(r.usageEdit()).isNull();
            assertThat(r.body().toString()).isEqualTo(body);
        }
    }

    @Test
    void aModelOrStreamOfAnotherTypeIsSkipped() {
        // found by dev.llmsidecar.fuzz.OpenAiRequestFuzzTest: not skipped, their members were read as the body's
        // own and the body looked truncated (undecodable)
        OpenAiRequest objectModel = inspect("{\"model\":{\"name\":\"m\"},\"stream\":true}");
        assertThat(objectModel.decodable()).isTrue();
        assertThat(objectModel.model()).isNull();
        assertThat(objectModel.stream()).isTrue();
        assertThat(objectModel.usage()).isEqualTo(UsageRequest.ABSENT);
        OpenAiRequest arrayStream = inspect("{\"stream\":[true],\"model\":\"m\"}");
        assertThat(arrayStream.decodable()).isTrue();
        assertThat(arrayStream.model()).isEqualTo("m");
        assertThat(arrayStream.stream()).isFalse();
    }

    @Test
    void aBodyInAnotherEncodingThanUtf8IsReadButNeverEdited() {
        // found by dev.llmsidecar.fuzz.OpenAiRequestFuzzTest: Jackson reads UTF-16 and UTF-32 (as Python's json
        // does), but then reports no byte offsets: the edit went to byte 0 and the engine got garbage
        for (String charset : new String[] {"UTF-16BE", "UTF-16LE", "UTF-32BE", "UTF-32LE"}) {
            byte[] body = "{\"model\":\"m\",\"stream\":true}".getBytes(java.nio.charset.Charset.forName(charset));
            OpenAiRequest r = inspector.inspect(Buffer.buffer(body));
            assertThat(r.decodable()).as(charset).isTrue();
            assertThat(r.model()).as(charset).isEqualTo("m");
            assertThat(r.stream()).as(charset).isTrue();
            assertThat(r.usage()).as(charset).isEqualTo(UsageRequest.NOT_APPLICABLE);
            assertThat(r.usageEdit()).as(charset).isNull();
        }
    }
}
