package dev.llmsidecar.wire;

import java.security.SecureRandom;

/**
 * A keyed 64-bit digest of a conversation's history, built one message at a time as the inspector reads them: a
 * chain, so the digest of the first n messages is known at every n. Two requests of one conversation share the
 * digest of the history they share, and nothing else does (to 2^-64). The key is drawn per process and never leaves
 * it: a digest cannot be tied to a text outside this process, and nothing can be read back from one.
 *
 * <p>The hash is xxHash64's round over 64-bit words of UTF-16 code units, seeded with the key, with its avalanche at
 * the end of each message. A message's text goes, as xxHash64's body does, into four lanes (word k into lane k mod 4)
 * whose rounds do not wait for each other: inspecting a 100 KB chat body with the feature on took 127-136 µs so, and
 * 294-314 µs with one chain of rounds, each waiting for the last (80-97 µs with the feature off; one core, warm).
 * Not a MAC against someone who can query it: nothing outside the process ever sees a digest.
 *
 * <p>What goes in (issue 45's canonical message): its kind ({@link TurnCounter.Message}), its text as one string
 * however many text parts carried it, and its other members' names and scalar values in order (tool calls, their
 * ids, images). What does not: system and developer messages (front ends rewrite a dated system prompt every turn),
 * the model's name, {@code cache_control} markers (agent clients move them every turn), thinking and reasoning (blocks,
 * their signatures, {@code reasoning_content}).
 */
public final class HistoryDigest {

    private static final long P1 = 0x9E3779B185EBCA87L;
    private static final long P2 = 0xC2B2AE3D27D4EB4FL;
    private static final long P3 = 0x165667B19E3779F9L;
    private static final long P4 = 0x85EBCA77C2B2AE63L;
    private static final long P5 = 0x27D4EB2F165667C5L;

    /** The process's key: drawn once, never written anywhere. */
    private static final long PROCESS_KEY = new SecureRandom().nextLong();

    private final long key;
    private long chain;
    // the message being read: its text's four lanes, the word being filled and how many of its chars are in
    private long text0;
    private long text1;
    private long text2;
    private long text3;
    private long textWord;
    private int textChars;
    private long textLength;
    private long other;

    public HistoryDigest() {
        this(PROCESS_KEY);
    }

    /** A digest under a given key (tests: digests of two instances are comparable only under one key). */
    public HistoryDigest(long key) {
        this.key = key;
        this.chain = key;
        startMessage();
    }

    /** The chain's value so far: the digest of the messages ended so far (never 0). */
    public long value() {
        return chain == 0 ? 1 : chain;
    }

    /** Text of the current message, in order; several calls are one text (a string, or text parts). */
    public void text(char[] chars, int offset, int length) {
        int i = offset;
        int end = offset + length;
        long words = (textLength - textChars) >>> 2; // whole words of this text so far: the next goes to lane words % 4
        textLength += length;
        // finish the word a call before began
        while (textChars != 0 && i < end) {
            textWord = (textWord << 16) | chars[i++];
            if (++textChars == 4) {
                lane(words++, textWord);
                textWord = 0;
                textChars = 0;
            }
        }
        while ((words & 3) != 0 && i + 4 <= end) {
            lane(words++, word(chars, i));
            i += 4;
        }
        if (i + 16 <= end) {
            long t0 = text0;
            long t1 = text1;
            long t2 = text2;
            long t3 = text3;
            for (; i + 16 <= end; i += 16) {
                t0 = round(t0, word(chars, i));
                t1 = round(t1, word(chars, i + 4));
                t2 = round(t2, word(chars, i + 8));
                t3 = round(t3, word(chars, i + 12));
                words += 4;
            }
            text0 = t0;
            text1 = t1;
            text2 = t2;
            text3 = t3;
        }
        for (; i + 4 <= end; i += 4) {
            lane(words++, word(chars, i));
        }
        for (; i < end; i++) {
            textWord = (textWord << 16) | chars[i];
            textChars++;
        }
    }

    private static long word(char[] c, int i) {
        return ((long) c[i] << 48) | ((long) c[i + 1] << 32) | ((long) c[i + 2] << 16) | c[i + 3];
    }

    private void lane(long word, long value) {
        switch ((int) (word & 3)) {
            case 0 -> text0 = round(text0, value);
            case 1 -> text1 = round(text1, value);
            case 2 -> text2 = round(text2, value);
            default -> text3 = round(text3, value);
        }
    }

    /** A member of the current message other than its text: a name, a scalar, a structure mark. */
    public void other(char[] chars, int offset, int length) {
        long h = other ^ length;
        long word = 0;
        int n = 0;
        for (int i = offset; i < offset + length; i++) {
            word = (word << 16) | chars[i];
            if (++n == 4) {
                h = round(h, word);
                word = 0;
                n = 0;
            }
        }
        other = round(h, word ^ ((long) n << 62));
    }

    /** A structure mark or a small number in the current message's other members. */
    public void other(long value) {
        other = round(other, value);
    }

    /**
     * The digest of an id (a response's, a conversation's) under the process's key: the same id gives the same digest
     * in this process, and nothing else does. Never 0.
     */
    public static long ofId(String kind, String id) {
        HistoryDigest d = new HistoryDigest();
        d.other(kind.toCharArray(), 0, kind.length());
        d.text(id.toCharArray(), 0, id.length());
        d.endMessage(TurnCounter.Message.INSTRUCTION);
        return d.value();
    }

    /** Two digests as one (a history under the id it continues). Never 0. */
    public static long combine(long a, long b) {
        long c = avalanche(round(round(a ^ P3, b), a));
        return c == 0 ? 1 : c;
    }

    /** The state of the message being read, to undo a part that turns out to be left out (a thinking block). */
    public long[] mark() {
        return new long[] {text0, text1, text2, text3, textWord, textChars, textLength, other};
    }

    public void reset(long[] mark) {
        text0 = mark[0];
        text1 = mark[1];
        text2 = mark[2];
        text3 = mark[3];
        textWord = mark[4];
        textChars = (int) mark[5];
        textLength = mark[6];
        other = mark[7];
    }

    /** Ends the current message of the given kind: the chain moves on by its digest. */
    public void endMessage(TurnCounter.Message kind) {
        long t = round(round(round(round(round(key ^ P4, text0), text1), text2), text3),
                textWord ^ ((long) textChars << 62));
        long m = avalanche(round(round(round(key ^ P5, kind.ordinal() + 1), avalanche(t ^ textLength)),
                avalanche(other)));
        chain = avalanche(round(chain, m));
        startMessage();
    }

    private void startMessage() {
        text0 = key ^ P1;
        text1 = key ^ P2;
        text2 = key ^ P3;
        text3 = key ^ P5;
        textWord = 0;
        textChars = 0;
        textLength = 0;
        other = key ^ P2;
    }

    private static long round(long acc, long input) {
        acc += input * P2;
        acc = Long.rotateLeft(acc, 31);
        return acc * P1;
    }

    private static long avalanche(long h) {
        h ^= h >>> 33;
        h *= P2;
        h ^= h >>> 29;
        h *= P3;
        h ^= h >>> 32;
        return h ^ P4;
    }
}
