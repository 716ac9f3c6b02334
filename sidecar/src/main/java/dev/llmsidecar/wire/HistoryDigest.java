package dev.llmsidecar.wire;

import java.security.SecureRandom;

/**
 * A keyed 64-bit digest of a conversation's history, built one message at a time as the inspector reads them: a
 * chain, so the digest of the first n messages is known at every n. Two requests of one conversation share the
 * digest of the history they share, and nothing else does (to 2^-64). The key is drawn per process and never leaves
 * it: a digest cannot be tied to a text outside this process, and nothing can be read back from one.
 *
 * <p>The hash is xxHash64's round over 64-bit words of UTF-16 code units, seeded with the key, with its avalanche at
 * the end of each message: a few nanoseconds per 4 characters, so a 200 KB history costs some tens of microseconds.
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
    // the message being read
    private long text;
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
        for (int i = offset; i < offset + length; i++) {
            textWord = (textWord << 16) | chars[i];
            if (++textChars == 4) {
                text = round(text, textWord);
                textWord = 0;
                textChars = 0;
            }
        }
        textLength += length;
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
        return new long[] {text, textWord, textChars, textLength, other};
    }

    public void reset(long[] mark) {
        text = mark[0];
        textWord = mark[1];
        textChars = (int) mark[2];
        textLength = mark[3];
        other = mark[4];
    }

    /** Ends the current message of the given kind: the chain moves on by its digest. */
    public void endMessage(TurnCounter.Message kind) {
        long t = round(text, textWord ^ ((long) textChars << 62));
        long m = avalanche(round(round(round(key ^ P5, kind.ordinal() + 1), avalanche(t ^ textLength)),
                avalanche(other)));
        chain = avalanche(round(chain, m));
        startMessage();
    }

    private void startMessage() {
        text = key ^ P1;
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
