package dev.llmsidecar.proxy;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The strict chunked-body scanner of the raw relay, read by read, without a socket. */
class ChunkedScannerTest {

    /** What a scan of a body, cut into reads at {@code cuts}, reported. */
    record Scanned(String data, int chunkEnds, int endIndex, String anomaly, int anomalyAt) {
    }

    static Scanned scan(String wire, int... cuts) {
        ChunkedScanner scanner = new ChunkedScanner();
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        int[] ends = {0};
        ChunkedScanner.Sink sink = new ChunkedScanner.Sink() {
            @Override
            public void data(ByteBuf read, int index, int length) {
                byte[] b = new byte[length];
                read.getBytes(index, b);
                data.writeBytes(b);
            }

            @Override
            public void chunkEnd(int index) {
                ends[0]++;
            }
        };
        byte[] bytes = wire.getBytes(ISO_8859_1);
        List<Integer> bounds = new ArrayList<>();
        for (int c : cuts) {
            bounds.add(c);
        }
        bounds.add(bytes.length);
        int start = 0;
        for (int end : bounds) {
            ByteBuf read = Unpooled.wrappedBuffer(bytes, start, end - start);
            int r = scanner.scan(read, read.readerIndex(), read.writerIndex(), sink);
            if (r == ChunkedScanner.ANOMALY) {
                return new Scanned(data.toString(ISO_8859_1), ends[0], -1, scanner.anomaly(),
                        start + scanner.anomalyIndex());
            }
            if (r >= 0) {
                return new Scanned(data.toString(ISO_8859_1), ends[0], start + r, null, -1);
            }
            start = end;
        }
        return new Scanned(data.toString(ISO_8859_1), ends[0], -1, null, -1);
    }

    @Test
    void aBodyIsItsChunksDataAndEndsAfterItsEmptyLine() {
        String wire = "5\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n";
        assertThat(scan(wire)).isEqualTo(new Scanned("helloabcdefghijklmnopqrstuvwxyz", 2, wire.length(), null, -1));
    }

    @Test
    void everyCutGivesTheSameAnswer() {
        String wire = "4;a=b ; c = \"q\\\"x\"\r\ndata\r\n3\r\nabc\r\n0\r\nx-t: 1\r\nY: z \r\n\r\n";
        Scanned whole = scan(wire);
        assertThat(whole).isEqualTo(new Scanned("dataabc", 2, wire.length(), null, -1));
        for (int i = 1; i < wire.length(); i++) {
            assertThat(scan(wire, i)).as("cut at " + i).isEqualTo(whole);
            for (int j = i + 1; j < wire.length(); j += 3) {
                assertThat(scan(wire, i, j)).as("cut at " + i + ", " + j).isEqualTo(whole);
            }
        }
    }

    @Test
    void randomBodiesInRandomReads() {
        Random random = new Random(7);
        for (int round = 0; round < 500; round++) {
            StringBuilder wire = new StringBuilder();
            StringBuilder entity = new StringBuilder();
            int chunks = random.nextInt(6);
            for (int c = 0; c < chunks; c++) {
                int n = 1 + random.nextInt(300);
                String data = randomBytes(random, n);
                String hex = Integer.toHexString(n);
                if (random.nextBoolean()) {
                    hex = hex.toUpperCase();
                }
                wire.append("0".repeat(random.nextInt(3))).append(hex).append("\r\n").append(data).append("\r\n");
                entity.append(data);
            }
            wire.append("0\r\n\r\n");
            String w = wire.toString();
            int[] cuts = random.ints(random.nextInt(5), 1, Math.max(2, w.length())).sorted().distinct().toArray();
            Scanned s = scan(w, cuts);
            assertThat(s.data()).isEqualTo(entity.toString());
            assertThat(s.endIndex()).isEqualTo(w.length());
            assertThat(s.chunkEnds()).isEqualTo(chunks);
        }
    }

    private static String randomBytes(Random random, int n) {
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = (char) random.nextInt(256); // any byte: CR, LF and '0' included
        }
        return new String(c);
    }

    @Test
    void theEndIsWhereTheEmptyLineEndsAndTheRestIsTheCallersToJudge() {
        Scanned s = scan("1\r\na\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n");
        assertThat(s.endIndex()).isEqualTo(11);
        assertThat(s.data()).isEqualTo("a");
    }

    @Test
    void malformedFramingIsAnAnomalyAtItsByte() {
        assertAnomaly("x\r\n", 0, "start with a hex digit");
        assertAnomaly("5\nhello\r\n", 1, "bare LF");
        assertAnomaly("5\r\nhello\n0\r\n\r\n", 8, "not followed by CRLF");
        assertAnomaly("5\r\nhelloX\r\n", 8, "not followed by CRLF");
        assertAnomaly("5\rhello", 2, "CR not followed by LF");
        assertAnomaly("00000000000000001\r\n", 16, "16 hex digits");
        assertAnomaly("80000000\r\n", 7, "chunk size over");
        assertAnomaly("5 x\r\n", 2, "after the chunk size");
        assertAnomaly("5;\r\n", 2, "extension name expected");
        assertAnomaly("5;a=\r\n", 4, "value expected");
        assertAnomaly("5;a=\"\u0001\"\r\n", 5, "quoted");
        assertAnomaly("5;a\n", 3, "bare LF");
        assertAnomaly("0\r\nx y: 1\r\n\r\n", 4, "trailer field name");
        assertAnomaly("0\r\nx:\u0001\r\n\r\n", 5, "trailer field value");
        assertAnomaly("0\r\nx: 1\n\r\n", 7, "trailer field value");
        assertAnomaly("0\r\n\rx", 4, "end of the body");
    }

    @Test
    void sizeLinesAndTrailersAreBounded() {
        String longExt = "1;" + "a".repeat(ChunkedScanner.MAX_LINE) + "\r\nx\r\n0\r\n\r\n";
        assertThat(scan(longExt).anomaly()).contains("longer than " + ChunkedScanner.MAX_LINE);
        String okExt = "1;" + "a".repeat(ChunkedScanner.MAX_LINE - 2) + "\r\nx\r\n0\r\n\r\n";
        assertThat(scan(okExt).anomaly()).isNull();
        String bigTrailers = "0\r\nx: " + "v".repeat(ChunkedScanner.MAX_TRAILERS) + "\r\n\r\n";
        assertThat(scan(bigTrailers).anomaly()).contains("larger than " + ChunkedScanner.MAX_TRAILERS);
        assertThat(scan("7fffffff\r\n").anomaly()).as("the largest size is read").isNull();
        assertThat(scan("0000000000000005\r\nhello\r\n0\r\n\r\n").data()).isEqualTo("hello");
    }

    @Test
    void afterAnAnomalyItStaysStoppedUntilReset() {
        ChunkedScanner scanner = new ChunkedScanner();
        ChunkedScanner.Sink none = (read, index, length) -> { };
        ByteBuf bad = Unpooled.copiedBuffer("z", ISO_8859_1);
        assertThat(scanner.scan(bad, 0, 1, none)).isEqualTo(ChunkedScanner.ANOMALY);
        ByteBuf good = Unpooled.copiedBuffer("0\r\n\r\n", ISO_8859_1);
        assertThat(scanner.scan(good, 0, 5, none)).isEqualTo(ChunkedScanner.ANOMALY);
        scanner.reset();
        assertThat(scanner.scan(good, 0, 5, none)).isEqualTo(5);
        assertThat(scanner.ended()).isTrue();
    }

    private static void assertAnomaly(String wire, int at, String why) {
        Scanned s = scan(wire);
        assertThat(s.anomaly()).as(wire).contains(why);
        assertThat(s.anomalyAt()).as(wire).isEqualTo(at);
    }
}
