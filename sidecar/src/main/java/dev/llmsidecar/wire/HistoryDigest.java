package dev.llmsidecar.wire;

import java.security.SecureRandom;

/**
 * A keyed 64-bit digest of a conversation's history, built one message at a time as the inspector reads them: a
 * chain, so the digest of the first n messages is known at every n. Two requests of one conversation share the
 * digest of the history they share, and nothing else does (to 2^-64). The key is drawn per process and never leaves
 * it: a digest cannot be tied to a text outside this process, and nothing can be read back from one.
 *
 * <p>The hash is xxHash64's round over 64-bit little-endian words of a message's text as UTF-8, seeded with the key,
 * with its avalanche at the end of each message. The text is hashed as UTF-8 whatever the body's encoding, so that
 * the inspector can hash a string's bytes where they lie in the body ({@link BodyText}), undecoded, and get the same
 * digest as from the decoded characters: a UTF-8 body (every one in practice) is hashed in place, a body in UTF-16 or
 * UTF-32 from its decoded text. A character is its UTF-8 bytes; a surrogate that is not half of a pair, the three
 * bytes of its code unit (as WTF-8). A message's text goes, as xxHash64's body does, into four lanes (word k into lane
 * k mod 4) whose rounds do not wait for each other. Inspecting a 100 KB chat body gathered as the proxy gathers it
 * (direct buffers of 64 KB) took, one core, warm: 27-35 µs with the feature off; on, 111-115 µs with the text decoded
 * by Jackson and hashed as UTF-16 code units, 4 to a word (a third of it decoding, a third hashing), and 70-79 µs
 * hashed in place as UTF-8, 8 bytes to a word (200 KB: 65-113 µs off, 190-230 µs on).
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
    // the message being read: its text's four lanes, how many whole words went into them, the word being filled
    // (little-endian: its first byte lowest) and how many of its bytes are in, the text's length in bytes
    private long text0;
    private long text1;
    private long text2;
    private long text3;
    private long textWords;
    private long textWord;
    private int textBytes;
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

    /**
     * Text of the current message, in order; several calls are one text (a string, or text parts), and text given as
     * characters here is the same text as its UTF-8 bytes given to {@link #utf8}.
     */
    public void text(char[] chars, int offset, int length) {
        int end = offset + length;
        for (int i = offset; i < end; i++) {
            char c = chars[i];
            if (c < 0x80) {
                // eight ASCII characters at a time: one word
                if (i + 8 <= end) {
                    long w = c;
                    int j = 1;
                    for (; j < 8; j++) {
                        char d = chars[i + j];
                        if (d >= 0x80) {
                            break;
                        }
                        w |= (long) d << (8 * j);
                    }
                    if (j == 8) {
                        utf8(w);
                        i += 7;
                        continue;
                    }
                }
                utf8Byte(c);
            } else if (Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(chars[i + 1])) {
                codePoint(Character.toCodePoint(c, chars[++i]));
            } else {
                codePoint(c); // a code unit of the basic plane, or a surrogate alone (its three bytes)
            }
        }
    }

    /** One code point of text as its UTF-8 bytes (a surrogate code unit alone: its three bytes). */
    public void codePoint(int cp) {
        if (cp < 0x80) {
            utf8Byte(cp);
        } else if (cp < 0x800) {
            utf8Byte(0xC0 | (cp >> 6));
            utf8Byte(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            utf8Byte(0xE0 | (cp >> 12));
            utf8Byte(0x80 | ((cp >> 6) & 0x3F));
            utf8Byte(0x80 | (cp & 0x3F));
        } else {
            utf8Byte(0xF0 | (cp >> 18));
            utf8Byte(0x80 | ((cp >> 12) & 0x3F));
            utf8Byte(0x80 | ((cp >> 6) & 0x3F));
            utf8Byte(0x80 | (cp & 0x3F));
        }
    }

    /** One byte of the current message's text as UTF-8. */
    public void utf8Byte(int b) {
        textWord |= (long) (b & 0xFF) << (8 * textBytes);
        textLength++;
        if (++textBytes == 8) {
            lane(textWord);
            textWord = 0;
            textBytes = 0;
        }
    }

    /** Eight bytes of the current message's text as UTF-8, the first in the lowest byte. */
    public void utf8(long word) {
        textLength += 8;
        if (textBytes == 0) {
            lane(word);
        } else {
            int shift = 8 * textBytes;
            lane(textWord | (word << shift));
            textWord = word >>> (64 - shift);
        }
    }

    /**
     * Four words of text at once (32 bytes, the first word first): the rounds of the four lanes at once when the text
     * so far is whole words.
     */
    public void utf8(long w0, long w1, long w2, long w3) {
        if (textBytes != 0 || (textWords & 3) != 0) {
            utf8(w0);
            utf8(w1);
            utf8(w2);
            utf8(w3);
            return;
        }
        text0 = round(text0, w0);
        text1 = round(text1, w1);
        text2 = round(text2, w2);
        text3 = round(text3, w3);
        textWords += 4;
        textLength += 32;
    }

    private void lane(long value) {
        switch ((int) (textWords++ & 3)) {
            case 0 -> text0 = round(text0, value);
            case 1 -> text1 = round(text1, value);
            case 2 -> text2 = round(text2, value);
            default -> text3 = round(text3, value);
        }
    }

    /** A member of the current message other than its text: a scalar, as the parser holds it. */
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

    /** A member's name (as {@link #other(char[], int, int)} of its characters, without copying them). */
    public void other(String name) {
        long h = other ^ name.length();
        long word = 0;
        int n = 0;
        for (int i = 0; i < name.length(); i++) {
            word = (word << 16) | name.charAt(i);
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
        d.other(kind);
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
        return new long[] {text0, text1, text2, text3, textWords, textWord, textBytes, textLength, other};
    }

    public void reset(long[] mark) {
        text0 = mark[0];
        text1 = mark[1];
        text2 = mark[2];
        text3 = mark[3];
        textWords = mark[4];
        textWord = mark[5];
        textBytes = (int) mark[6];
        textLength = mark[7];
        other = mark[8];
    }

    /** Ends the current message of the given kind: the chain moves on by its digest. */
    public void endMessage(TurnCounter.Message kind) {
        long t = round(round(round(round(round(key ^ P4, text0), text1), text2), text3),
                textWord ^ ((long) textBytes << 60));
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
        textWords = 0;
        textWord = 0;
        textBytes = 0;
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
