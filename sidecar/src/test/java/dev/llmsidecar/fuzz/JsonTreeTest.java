package dev.llmsidecar.fuzz;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import org.junit.jupiter.api.Test;

/** The fuzz targets' reference reader: a quirk of its own must never become the expected answer. */
class JsonTreeTest {

    /**
     * Found by {@code OpenAiRequestFuzzTest#anyBytes} (an oracle bug): Jackson's symbol table pads a name's last
     * partial four-byte group with 0xFF, so once the reference's factory has seen {@code "modelodel"} it builds a tree
     * of {@code "modelode\xFF\xFFl"}, bytes that are not UTF-8 and that the sidecar (rightly) refuses.
     */
    @Test
    void bytesThatAreNotUtf8AreNeverATreeEvenWhenJacksonsSymbolTableTakesThem() {
        byte[] known = "{\"modelodel\":\"b\",\"stream\":true}".getBytes(UTF_8);
        assertThat(JsonTree.read(known, 0, known.length, true).verdict()).isEqualTo(JsonTree.Verdict.TREE);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes("{\"modelode".getBytes(UTF_8));
        b.write(0xFF);
        b.write(0xFF);
        b.writeBytes("l\":\"b\",\"stream\":true}".getBytes(UTF_8));
        byte[] padded = b.toByteArray();
        assertThat(JsonTree.read(padded, 0, padded.length, true).verdict()).isEqualTo(JsonTree.Verdict.NOT_UTF8);
    }

    @Test
    void utf16AndUtf32BodiesStillHaveAReference() {
        for (String charset : new String[] {"UTF-16BE", "UTF-16LE", "UTF-32BE", "UTF-32LE"}) {
            byte[] body = "{\"model\":\"é\",\"stream\":true}".getBytes(java.nio.charset.Charset.forName(charset));
            JsonTree.Reading reading = JsonTree.read(body, 0, body.length, true);
            assertThat(reading.verdict()).as(charset).isEqualTo(JsonTree.Verdict.TREE);
            assertThat(reading.object().path("model").textValue()).as(charset).isEqualTo("é");
        }
    }
}
