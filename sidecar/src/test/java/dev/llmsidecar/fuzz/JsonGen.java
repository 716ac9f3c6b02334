package dev.llmsidecar.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Writes valid JSON text whose shape the fuzzer's bytes choose: members in any order, whitespace anywhere it is
 * allowed, every character of a string (member names included) written plain, as a short escape or as a
 * {@code \\u} escape (surrogate pairs too), numbers in every JSON form, unknown members and values of the wrong
 * type next to the expected ones. Names are never repeated within an object (JSON leaves duplicates to the
 * reader, so there is nothing to compare). When the fuzzer's bytes run out every choice takes its first, plain
 * option, so generation always ends, with small output.
 */
final class JsonGen {

    /** A member about to be written: its name (unescaped) and its value's JSON text. */
    record Member(String name, String value) {
    }

    private static final String[] WHITESPACE = {" ", "\n", "\t", "\r\n", "  ", " \t\n "};
    private static final String[] UNKNOWN_NAMES = {"id", "object", "created", "model", "index", "logprobs",
        "system_fingerprint", "role", "x", "", "é", "a\"b", "😀", "name\\", "\u0000"};
    private static final String[] TEXTS = {"", "x", " quick", "é", "Ünïcödé", "😀", "\"q\"", "a\\b", "\n", "\t",
        "\u0000", "\u001f", "\u007f", "\u2028", "\ud800", "\udfff", "{\"a\":1}", "null", "  "};
    private static final String[] NUMBERS = {"0", "-0", "1", "-1", "0.0", "-0.0", "1.5", "-2.5e+3", "1e5", "1E5",
        "1e-5", "1E+0", "0.1e1", "123456789012345678", "1234567890123456789", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
        "1e400", "-1e400", "1e-400", "4.9e-324", "1.7976931348623157e308", "9.2233720368547758E18",
        "12345678901234567890.5", "0.000001"};

    private final FuzzedDataProvider data;
    private int valuesLeft = 300; // bounds the output whatever the fuzzer asks for

    JsonGen(FuzzedDataProvider data) {
        this.data = data;
    }

    boolean chance() {
        return data.consumeBoolean();
    }

    /** 0..max, 0 when the data has run out. */
    int upTo(int max) {
        return data.consumeInt(0, max);
    }

    @SafeVarargs
    final <T> T pick(T... options) {
        return options[upTo(options.length - 1)];
    }

    // ------------------------------------------------------------------------------------------ structure

    /** Whitespace that may stand between tokens; usually none. */
    String ws() {
        return upTo(3) == 3 ? pick(WHITESPACE) : "";
    }

    /** The member, or null (left out) when the fuzzer says so. */
    Member maybe(String name, Supplier<String> value) {
        return chance() ? new Member(name, value.get()) : null;
    }

    /** The member always. */
    Member member(String name, Supplier<String> value) {
        return new Member(name, value.get());
    }

    /** Usually {@code expected}; sometimes a value of any type in its place. */
    String typed(Supplier<String> expected) {
        return upTo(7) < 7 ? expected.get() : anyValue(2);
    }

    /** An object of the given members (nulls left out), a few unknown ones added, in an order the fuzzer picks. */
    String object(Member... known) {
        List<Member> members = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (Member m : known) {
            if (m != null && names.add(m.name())) {
                members.add(m);
            }
        }
        int unknown = upTo(3) == 3 ? 1 + upTo(2) : 0;
        for (int i = 0; i < unknown; i++) {
            String name = chance() ? pick(UNKNOWN_NAMES) : data.consumeString(6);
            if (names.add(name)) {
                members.add(new Member(name, anyValue(3)));
            }
        }
        for (int i = members.size() - 1; i > 0; i--) {
            int j = upTo(i);
            Member t = members.get(i);
            members.set(i, members.get(j));
            members.set(j, t);
        }
        StringBuilder sb = new StringBuilder("{").append(ws());
        for (int i = 0; i < members.size(); i++) {
            if (i > 0) {
                sb.append(',').append(ws());
            }
            sb.append(string(members.get(i).name())).append(ws()).append(':').append(ws())
                    .append(members.get(i).value()).append(ws());
        }
        return sb.append('}').toString();
    }

    /** An array of {@code n} elements. */
    String array(int n, Supplier<String> element) {
        StringBuilder sb = new StringBuilder("[").append(ws());
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                sb.append(',').append(ws());
            }
            sb.append(element.get()).append(ws());
        }
        return sb.append(']').toString();
    }

    // ------------------------------------------------------------------------------------------ values

    /** A value of any type, nested at most {@code depth} deep. */
    String anyValue(int depth) {
        if (--valuesLeft <= 0) {
            return "null";
        }
        int kind = upTo(depth > 0 ? 7 : 4);
        return switch (kind) {
            case 0 -> "null";
            case 1 -> chance() ? "true" : "false";
            case 2 -> number();
            case 3, 4 -> string(text());
            case 5 -> array(upTo(3), () -> anyValue(depth - 1));
            default -> {
                int n = upTo(3);
                Member[] members = new Member[n];
                for (int i = 0; i < n; i++) {
                    members[i] = new Member(chance() ? pick(UNKNOWN_NAMES) : data.consumeString(4),
                            anyValue(depth - 1));
                }
                yield object(members);
            }
        };
    }

    /** A string value's content: a telling one, or whatever the fuzzer gives. */
    String text() {
        return chance() ? pick(TEXTS) : data.consumeString(12);
    }

    /** A non-empty text, for a member whose presence matters. */
    String nonEmptyText() {
        String t = text();
        return t.isEmpty() ? "x" : t;
    }

    /** Any JSON number: integers up to and beyond long, fractions, exponents, values beyond double. */
    String number() {
        return switch (upTo(3)) {
            case 0 -> integer(data.consumeLong());
            case 1 -> pick(NUMBERS);
            case 2 -> (chance() ? "-" : "") + data.consumeInt(0, 999_999) + "." + data.consumeInt(0, 99_999)
                    + (chance() ? pick("e", "E") + pick("", "+", "-") + data.consumeInt(0, 400) : "");
            default -> Double.toString(data.consumeRegularDouble()).replace("Infinity", "1e999");
        };
    }

    /** A count as servers send it: a small integer, sometimes written as a float or as something else. */
    String count() {
        return switch (upTo(7)) {
            case 0, 1, 2, 3 -> integer(data.consumeInt(0, 100_000));
            case 4 -> integer(data.consumeLong());
            case 5 -> number();
            default -> anyValue(1);
        };
    }

    /** Milliseconds as servers send them. */
    String millis() {
        return switch (upTo(5)) {
            case 0, 1 -> data.consumeInt(0, 100_000) + "." + data.consumeInt(0, 999);
            case 2 -> integer(data.consumeInt(-5, 100_000));
            case 3 -> number();
            default -> anyValue(1);
        };
    }

    /** {@code v} as a JSON integer (a negative zero sometimes). */
    String integer(long v) {
        return v == 0 && upTo(7) == 7 ? "-0" : Long.toString(v);
    }

    /** A string literal of {@code value}, each character written plain or escaped as the fuzzer picks. */
    String string(String value) {
        StringBuilder sb = new StringBuilder(value.length() + 2).append('"');
        int i = 0;
        while (i < value.length()) {
            int cp = value.codePointAt(i);
            i += Character.charCount(cp);
            int how = upTo(7); // mostly plain
            if (Character.isSupplementaryCodePoint(cp)) {
                if (how >= 6) { // as a surrogate pair of escapes
                    sb.append(unicodeEscape(Character.highSurrogate(cp)))
                            .append(unicodeEscape(Character.lowSurrogate(cp)));
                } else {
                    sb.appendCodePoint(cp);
                }
                continue;
            }
            char c = (char) cp;
            // a lone surrogate has no UTF-8 form: only its escape can carry it
            boolean mustEscape = c == '"' || c == '\\' || c < 0x20 || Character.isSurrogate(c);
            String shortEscape = shortEscape(c);
            if (mustEscape || how >= 6) {
                sb.append(shortEscape != null && how % 2 == 0 ? shortEscape : unicodeEscape(c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    private String unicodeEscape(char c) {
        String hex = String.format("%04x", (int) c);
        return "\\u" + (chance() ? hex.toUpperCase() : hex);
    }

    private static String shortEscape(char c) {
        return switch (c) {
            case '"' -> "\\\"";
            case '\\' -> "\\\\";
            case '/' -> "\\/";
            case '\b' -> "\\b";
            case '\f' -> "\\f";
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> "\\t";
            default -> null;
        };
    }
}
