package dev.llmsidecar.fuzz;

import static dev.llmsidecar.support.JacksonNameTables.byteTableCollisions;
import static dev.llmsidecar.support.JacksonNameTables.charTableCollisions;
import static dev.llmsidecar.support.JacksonNameTables.object;
import static java.nio.charset.StandardCharsets.UTF_16BE;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.JacksonNameTables;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fuzz targets' reference reader: a quirk of its own must never become the expected answer. */
class JsonTreeTest {

    /**
     * Found by {@code OpenAiRequestFuzzTest#anyBytes} (an oracle bug): Jackson's name table pads a name's last
     * partial four-byte group with 0xFF, so once it has met {@code "modelodel"} it takes {@code "modelode\xFF\xFFl"}
     * for that name, bytes that are not UTF-8 and that the sidecar (rightly) refuses. The reference's factory then
     * remembered earlier inputs; now it is fresh per input, and the quirk is left within one document.
     */
    @Test
    void bytesThatAreNotUtf8AreNeverATreeEvenWhenJacksonsNameTableTakesThem() {
        byte[] known = "{\"modelodel\":\"b\",\"stream\":true}".getBytes(UTF_8);
        assertThat(JsonTree.read(known, 0, known.length, true).verdict()).isEqualTo(JsonTree.Verdict.TREE);
        byte[] padded = withPaddedName("{\"", "\":\"b\",\"stream\":true}");
        assertThat(JsonTree.read(padded, 0, padded.length, true).verdict()).isEqualTo(JsonTree.Verdict.NOT_UTF8);
        byte[] sameDocument = withPaddedName("{\"x\":{\"modelodel\":1},\"", "\":\"b\"}");
        assertThat(JsonTree.read(sameDocument, 0, sameDocument.length, true).verdict())
                .isEqualTo(JsonTree.Verdict.NOT_UTF8);
    }

    /**
     * A shared factory refuses names of one hash once enough of them have been read before (see
     * {@link JacksonNameTables}); the reference reads each input as a fresh factory does.
     */
    @Test
    void theVerdictDependsOnTheBytesAloneNotOnEarlierInputs() {
        byte[] bytes = object(byteTableCollisions(1000, 100)).getBytes(UTF_8);
        byte[] chars = object(charTableCollisions(512, 200)).getBytes(UTF_16BE);
        byte[] earlierBytes = object(byteTableCollisions(0, 500)).getBytes(UTF_8);
        byte[] earlierChars = object(charTableCollisions(0, 150)).getBytes(UTF_16BE);
        for (byte[] input : List.of(bytes, chars, earlierBytes, earlierChars, bytes, chars)) {
            assertThat(JsonTree.read(input, 0, input.length, true).verdict()).isEqualTo(JsonTree.Verdict.TREE);
        }
    }

    /** {@code before + "modelode\xFF\xFFl" + after} */
    private static byte[] withPaddedName(String before, String after) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes((before + "modelode").getBytes(UTF_8));
        b.write(0xFF);
        b.write(0xFF);
        b.writeBytes(("l" + after).getBytes(UTF_8));
        return b.toByteArray();
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
