package dev.llmsidecar.wire;

/**
 * Where a request sits in its conversation, read from the messages it sends, one message at a time in the inspector's
 * one pass (nothing is kept but three numbers). Issue 45's rules, the same for every chat format:
 * <ul>
 *   <li>system and developer messages are not counted (front ends rewrite them every turn);</li>
 *   <li>turn = 1 + the runs of consecutive model messages, not counting a trailing run (a prefill, or a final message
 *       the model is asked to continue);</li>
 *   <li>{@code after} = what the last non-model message was: a tool's result, or the user.</li>
 * </ul>
 * Assistant turns given as few-shot examples count as turns: the request cannot tell them apart (docs/metrics.md).
 */
public final class TurnCounter {

    /** What the model answers: the user's message, a tool's result, or nothing of a conversation (a completion). */
    public enum After {
        USER("user"), TOOL("tool"), NONE("none");

        private final String label;

        After(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** What one message is, as far as turns go. */
    public enum Message {
        /** system, developer: not part of the turns */
        INSTRUCTION,
        /** the user's */
        USER,
        /** a tool's (or function's) result */
        TOOL_RESULT,
        /** the model's: an assistant message, a tool call, reasoning */
        MODEL
    }

    /** The turn a request is, and what it answers. {@code turn} 0: unknown (linked to a turn the sidecar did not see). */
    public record Position(int turn, After after) {

        public static final Position NONE = new Position(0, After.NONE);

        /** The bounded label value: 1, 2, 3-4, 5-8, 9-16, 17+, or unknown. */
        public String bucket() {
            if (after == After.NONE) {
                return "none";
            }
            if (turn <= 0) {
                return "unknown";
            }
            return turn == 1 ? "1" : turn == 2 ? "2" : turn <= 4 ? "3-4" : turn <= 8 ? "5-8" : turn <= 16 ? "9-16"
                    : "17+";
        }
    }

    private int modelRuns;
    private boolean inModelRun;
    private After after = After.USER;

    /** The next message of the request, in order. */
    public void message(Message message) {
        switch (message) {
            case INSTRUCTION -> { }
            case MODEL -> inModelRun = true;
            case USER, TOOL_RESULT -> {
                if (inModelRun) {
                    modelRuns++;
                    inModelRun = false;
                }
                after = message == Message.TOOL_RESULT ? After.TOOL : After.USER;
            }
        }
    }

    /** The message of a chat role ({@code user}, {@code assistant}, {@code tool}, ...); unknown roles count as the user's. */
    public static Message ofRole(String role) {
        if (role == null) {
            return Message.USER;
        }
        return switch (role) {
            case "system", "developer" -> Message.INSTRUCTION;
            case "assistant", "model" -> Message.MODEL;
            case "tool", "function", "ipython" -> Message.TOOL_RESULT;
            default -> Message.USER;
        };
    }

    /** The position of the messages given so far. */
    public Position position() {
        return new Position(1 + modelRuns, after);
    }
}
