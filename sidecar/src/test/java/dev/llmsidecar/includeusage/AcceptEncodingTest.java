package dev.llmsidecar.includeusage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Whether a client's Accept-Encoding lets the engine compress: read in place, as the split-based reading did. */
class AcceptEncodingTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
        "NULL|false", "''|false", "identity|false", " Identity ; q=1 |false", "gzip|true", "gzip;q=0|false",
        "gzip; Q=0.0|false", "gzip;q=0.001|true", "identity, gzip;q=0|false", "identity, br|true", " , ,|false",
        "gzip;q=x|true", "gzip;level=1;q=0|false", "gzip;q= 0 |false", "*;q=0, identity|false", "*|true",
        "deflate ;q=0.5, gzip;q=0|true", "gzip;q =0|true", "gzip;q=0;q=1|true", "gzip;q=1;q=0|false"})
    void readsAcceptEncoding(String header, boolean expected) {
        assertThat(IncludeUsage.acceptsCompression(header)).as(header).isEqualTo(expected)
                .isEqualTo(bySplitting(header));
    }

    @Test
    void arbitraryHeadersReadAsTheSplitReadingDid() {
        java.util.Random random = new java.util.Random(7);
        String alphabet = "gzipq=0.1;, identy\t*";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder s = new StringBuilder();
            int length = random.nextInt(24);
            for (int j = 0; j < length; j++) {
                s.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            assertThat(IncludeUsage.acceptsCompression(s.toString())).as(s.toString())
                    .isEqualTo(bySplitting(s.toString()));
        }
    }

    /** The former reading, the reference. */
    static boolean bySplitting(String acceptEncoding) {
        if (acceptEncoding == null) {
            return false;
        }
        for (String part : acceptEncoding.split(",")) {
            String[] pieces = part.split(";");
            String coding = pieces.length == 0 ? "" : pieces[0].trim().toLowerCase(Locale.ROOT);
            if (coding.isEmpty() || coding.equals("identity")) {
                continue;
            }
            boolean refused = false;
            for (int i = 1; i < pieces.length; i++) {
                String p = pieces[i].trim().toLowerCase(Locale.ROOT);
                if (p.startsWith("q=")) {
                    try {
                        refused = Double.parseDouble(p.substring(2).trim()) <= 0;
                    } catch (NumberFormatException e) {
                        refused = false;
                    }
                }
            }
            if (!refused) {
                return true;
            }
        }
        return false;
    }
}
