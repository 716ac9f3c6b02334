package dev.llmsidecar.trace;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The canonical prompt the hash ids are made of: the prompt's members of the body, whatever the raw JSON's whitespace,
 * escapes and member order, without the request's other members; a cut body as far as it goes; other bytes as they are.
 */
class CanonicalTest {

    static final JsonFactory JSON = new JsonFactory();

    static String canonical(String path, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        Canonical.Bytes c = Canonical.of(JSON, path, b, b.length);
        return new String(c.array(), 0, c.length(), StandardCharsets.UTF_8);
    }

    @Test
    void whitespaceEscapesMemberOrderAndOtherMembersDoNotMatter() {
        String a = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                + "{\"role\":\"user\",\"content\":\"Why is the sky blue?\"}],\"max_tokens\":10}";
        String b = "{\n  \"messages\" : [ { \"content\" : \"Be brief.\" , \"role\" : \"system\" } ,\n"
                + "    {\"content\":\"Why is the sky \\u0062lue?\",\"role\":\"user\"} ],\n"
                + "  \"temperature\": 0.7, \"model\": \"other\", \"stream\": false\n}";
        assertThat(canonical("/v1/chat/completions", b)).isEqualTo(canonical("/v1/chat/completions", a))
                .isEqualTo("messages:[{content:Be brief.\nrole:system\n}\n{content:Why is the sky blue?\nrole:user\n}\n]"
                        + "\n");
    }

    @Test
    void toolsComeBeforeTheMessagesWhereverTheyAreInTheBody() {
        String before = "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
        String after = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                + "\"tools\":[{\"function\":{\"name\":\"f\"},\"type\":\"function\"}]}";
        assertThat(canonical("/v1/chat/completions", after)).isEqualTo(canonical("/v1/chat/completions", before))
                .startsWith("tools:[{function:{name:f\n}\ntype:function\n}\n]\nmessages:");
    }

    @Test
    void eachRouteHashesItsOwnPromptMembers() {
        assertThat(canonical("/v1/completions", "{\"model\":\"m\",\"prompt\":\"Once upon\"}"))
                .isEqualTo("prompt:Once upon\n");
        assertThat(canonical("/v1/messages", "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                + "\"text\":\"hi\"}]}],\"system\":\"S\",\"max_tokens\":5}"))
                .isEqualTo("system:S\nmessages:[{content:[{text:hi\ntype:text\n}\n]\nrole:user\n}\n]\n");
        assertThat(canonical("/api/generate", "{\"prompt\":\"p\",\"system\":\"s\"}")).isEqualTo("system:s\nprompt:p\n");
        assertThat(canonical("/generate_stream", "{\"inputs\":\"in\",\"parameters\":{\"max_new_tokens\":3}}"))
                .isEqualTo("inputs:in\n");
        assertThat(canonical("/v1/responses", "{\"input\":\"q\",\"instructions\":\"i\"}"))
                .isEqualTo("instructions:i\ninput:q\n");
        assertThat(canonical("/completion", "{\"prompt\":[1,2,3]}")).isEqualTo("prompt:[1\n2\n3\n]\n");
    }

    @Test
    void aCutBodyGivesThePromptAsFarAsItWasRead() {
        String whole = "{\"messages\":[{\"role\":\"system\",\"content\":\"shared system text\"},"
                + "{\"role\":\"user\",\"content\":\"the question\"}]}";
        String cut = whole.substring(0, whole.indexOf("the question") + 3);
        assertThat(canonical("/v1/chat/completions", cut))
                .startsWith("messages:[{content:shared system text\nrole:system\n}\n");
    }

    @Test
    void aBodyThatIsNoJsonObjectIsHashedAsItIs() {
        assertThat(canonical("/v1/chat/completions", "not json at all")).isEqualTo("not json at all");
        assertThat(canonical("/v1/chat/completions", "[1,2]")).isEqualTo("[1,2]");
    }

    @Test
    void unicodeIsUtf8AndDeepValuesAreCutShort() {
        assertThat(canonical("/v1/completions", "{\"prompt\":\"h\\u00e9llo \\ud83d\\ude00\"}"))
                .isEqualTo("prompt:héllo 😀\n");
        String deep = "{\"prompt\":" + "[".repeat(100) + "1" + "]".repeat(100) + "}";
        assertThat(canonical("/v1/completions", deep)).contains("{...}").hasSizeLessThan(300);
    }
}
