package dev.llmsidecar.conversation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.conversation.ConversationTable.Eviction;
import dev.llmsidecar.conversation.ConversationTable.Kind;
import dev.llmsidecar.conversation.ConversationTable.Link;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConversationTableTest {

    static final long MS = 1_000_000;
    static final long HOUR = 3_600_000 * MS;

    record Left(Eviction why, int turns, boolean last) {
    }

    final List<Left> left = new ArrayList<>();
    final ConversationTable.Listener listener = (why, turns, last) -> left.add(new Left(why, turns, last));
    final java.util.Map<Long, Link> links = new java.util.HashMap<>();

    /** A chat turn arrives (no alias, after the user); the link without its entry and conversation, as tests compare it. */
    Link arrive(ConversationTable table, long key, long previous, long now) {
        return arrive(table, key, previous, 0, false, now);
    }

    Link arrive(ConversationTable table, long key, long previous, long alias, boolean afterTool, long now) {
        Link link = table.arrived(key, previous, alias, afterTool, false, now);
        links.put(key, link);
        return compared(link);
    }

    /** What the tests compare of a link: all but where its entry is and its conversation's number. */
    static Link compared(Link link) {
        return new Link(link.kind(), link.turn(), link.gapNanos(), link.modelNanosBefore(), 0, -1);
    }

    void end(ConversationTable table, long key, long now) {
        end(table, key, 0, now);
    }

    void end(ConversationTable table, long key, long alias, long now) {
        table.ended(links.get(key), key, alias, now);
    }

    static Link link(Kind kind, int turn, long gap) {
        return new Link(kind, turn, gap, -1, 0, -1);
    }

    @Test
    void everyTurnOfAConversationCarriesItsNumberAndEachFirstTurnANewOne() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        int a = table.arrived(11, 0, 0, false, false, 0).conversation();
        int b = table.arrived(21, 0, 0, false, false, 1).conversation();
        assertThat(a).isNotZero();
        assertThat(b).isNotZero().isNotEqualTo(a);
        Link a1 = table.arrived(11, 0, 0, false, false, 2); // a regeneration of a's first turn
        assertThat(a1.kind()).isEqualTo(Kind.REPEATED);
        assertThat(a1.conversation()).isEqualTo(a);
        table.ended(a1, 11, 0, 3);
        assertThat(table.arrived(12, 11, 0, false, false, 4).conversation()).as("a's second turn").isEqualTo(a);
        assertThat(table.arrived(22, 21, 0, false, false, 5).conversation()).as("b's second turn, unfinished").isEqualTo(b);
        assertThat(table.arrived(31, 0, 0, false, false, 6).conversation()).isNotZero().isNotIn(a, b);
    }

    @Test
    void aConversationsTurnsLinkAndTheGapRunsFromTheEndOfTheTurnBefore() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        assertThat(arrive(table, 11, 0, 0)).isEqualTo(link(Kind.FIRST, 1, -1));
        end(table, 11, 2_000 * MS);
        assertThat(arrive(table, 12, 11, 9_000 * MS)).isEqualTo(link(Kind.NEXT, 2, 7_000 * MS));
        end(table, 12, 9_500 * MS);
        assertThat(arrive(table, 13, 12, 9_520 * MS)).isEqualTo(link(Kind.NEXT, 3, 20 * MS));
        // another conversation beside it
        assertThat(arrive(table, 21, 0, 9_600 * MS).kind()).isEqualTo(Kind.FIRST);
        assertThat(table.size()).isEqualTo(4);
    }

    @Test
    void theSameHistoryAgainIsARegenerationNotATurn() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        arrive(table, 11, 0, 0);
        end(table, 11, 100 * MS);
        arrive(table, 12, 11, 200 * MS);
        end(table, 12, 300 * MS);
        assertThat(arrive(table, 12, 11, 1_000 * MS)).isEqualTo(link(Kind.REPEATED, 2, -1));
        end(table, 12, 1_400 * MS);
        // the next turn's gap runs from the answer it saw: the regenerated one
        assertThat(arrive(table, 13, 12, 1_500 * MS)).isEqualTo(link(Kind.NEXT, 3, 100 * MS));
    }

    @Test
    void aTurnThatFollowsOneStillRunningHasNoGap() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        arrive(table, 11, 0, 0);
        assertThat(arrive(table, 12, 11, 50 * MS)).isEqualTo(link(Kind.NEXT_OF_UNFINISHED, 2, -1));
    }

    @Test
    void pastItsCapacityTheOldestLeavesAndIsCountedWithItsConversationsLength() {
        ConversationTable table = new ConversationTable(3, HOUR, listener);
        arrive(table, 1, 0, 0);
        end(table, 1, 1);
        arrive(table, 2, 1, 2); // turn 2 of conversation 1: entry 1 is no longer its last
        arrive(table, 3, 0, 3);
        arrive(table, 4, 0, 4); // full: 1 leaves
        arrive(table, 5, 0, 5); // 2 leaves: the end of a 2-turn conversation
        assertThat(left).containsExactly(new Left(Eviction.CAPACITY, 1, false), new Left(Eviction.CAPACITY, 2, true));
        assertThat(arrive(table, 2, 1, 6).kind()).as("gone: a new conversation").isEqualTo(Kind.FIRST);
        assertThat(table.size()).isEqualTo(3);
    }

    @Test
    void pastTheAgeLimitAnEntryLeavesAndIsCountedApart() {
        ConversationTable table = new ConversationTable(16, 10 * MS, listener);
        arrive(table, 1, 0, 0);
        arrive(table, 2, 0, 8 * MS);
        assertThat(arrive(table, 3, 1, 11 * MS).kind()).isEqualTo(Kind.FIRST);
        assertThat(left).containsExactly(new Left(Eviction.AGE, 1, true));
        assertThat(table.size()).isEqualTo(2);
    }

    /** Responses API: the next turn names the response the engine gave the turn before, not its history. */
    @Test
    void aTurnFindsTheOneBeforeByTheIdOfItsResponse() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        arrive(table, 11, 0, 0);
        end(table, 11, 99, 100 * MS); // its response id's digest
        assertThat(arrive(table, 12, 99, 400 * MS)).isEqualTo(link(Kind.NEXT, 2, 300 * MS));
        end(table, 12, 98, 500 * MS);
        assertThat(arrive(table, 13, 98, 510 * MS)).isEqualTo(link(Kind.NEXT, 3, 10 * MS));
        assertThat(arrive(table, 14, 97, 520 * MS).kind()).as("an id never seen").isEqualTo(Kind.FIRST);
    }

    /** After a regeneration the next turn names the id of the answer it got then, and finds it. */
    @Test
    void aTurnAfterARegenerationFindsItByTheNewResponsesId() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        arrive(table, 11, 0, 0);
        end(table, 11, 91, 100 * MS);
        assertThat(arrive(table, 11, 0, 200 * MS).kind()).isEqualTo(Kind.REPEATED);
        end(table, 11, 92, 300 * MS);
        assertThat(arrive(table, 12, 92, 0, false, 450 * MS)).isEqualTo(link(Kind.NEXT, 2, 150 * MS));
    }

    /** A request the engine did not serve leaves: its resend is a first turn again, not a regeneration. */
    @Test
    void aForgottenTurnIsNotFoundAgain() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        Link failed = table.arrived(11, 0, 0, false, false, 0);
        table.forget(failed, 11);
        assertThat(table.size()).isZero();
        assertThat(arrive(table, 11, 0, 10 * MS).kind()).isEqualTo(Kind.FIRST);
        assertThat(table.size()).isEqualTo(1);
        assertThat(left).isEmpty();
    }

    /** A turn that names an id never seen has an unknown turn number, and so have the turns that follow it. */
    @Test
    void aConversationFirstSeenByAnUnknownIdHasUnknownTurns() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        Link first = table.arrived(12, 99, 0, false, true, 0);
        assertThat(compared(first)).isEqualTo(link(Kind.FIRST, 0, -1));
        table.ended(first, 12, 97, 10);
        Link next = table.arrived(15, 97, 0, false, true, 30);
        assertThat(compared(next)).as("linked, but still unknown").isEqualTo(link(Kind.NEXT, 0, 20));
        // a conversation that started here knows its turns
        Link start = table.arrived(21, 0, 0, false, false, 40);
        table.ended(start, 21, 96, 50);
        assertThat(compared(table.arrived(22, 96, 0, false, true, 60))).isEqualTo(link(Kind.NEXT, 2, 10));
    }

    /** A conversation's id is an alias that moves to its newest turn; the same input again is still a turn. */
    @Test
    void aConversationsIdFollowsItsNewestTurn() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        arrive(table, 11, 77, 77, false, 0);
        end(table, 11, 100 * MS);
        assertThat(arrive(table, 12, 77, 77, false, 300 * MS)).isEqualTo(link(Kind.NEXT, 2, 200 * MS));
        end(table, 12, 400 * MS);
        assertThat(arrive(table, 12, 77, 77, false, 450 * MS)).isEqualTo(link(Kind.NEXT, 3, 50 * MS));
        assertThat(table.size()).isEqualTo(3);
    }

    /**
     * An agent: the model's time of the turn that called the tool is agent time once the tool's result comes back;
     * a turn that answers a tool counts its own (so the caller adds it when it ends), never twice.
     */
    @Test
    void aToolTurnHandsBackTheModelTimeOfTheCallThatStartedIt() {
        ConversationTable table = new ConversationTable(16, HOUR, listener);
        arrive(table, 1, 0, 0);
        end(table, 1, 100 * MS);
        assertThat(arrive(table, 2, 1, 0, true, 150 * MS)).isEqualTo(new Link(Kind.NEXT, 2, 50 * MS, 100 * MS, 0, -1));
        end(table, 2, 300 * MS);
        assertThat(arrive(table, 3, 2, 0, true, 320 * MS)).isEqualTo(new Link(Kind.NEXT, 3, 20 * MS, -1, 0, -1));
        end(table, 3, 400 * MS);
        assertThat(arrive(table, 4, 3, 0, false, 10_400 * MS)).as("the user again: no agent time")
                .isEqualTo(new Link(Kind.NEXT, 4, 10_000 * MS, -1, 0, -1));
    }

    /** A regeneration moves its entry to the tail: it is not evicted as the oldest, and not counted when it moves. */
    @Test
    void aRegeneratedTurnMovesToTheTail() {
        ConversationTable table = new ConversationTable(3, HOUR, listener);
        arrive(table, 1, 0, 0);
        arrive(table, 2, 0, 1);
        arrive(table, 1, 0, 2); // again: moves
        arrive(table, 3, 0, 3); // full: the moved-away slot leaves, uncounted
        assertThat(left).isEmpty();
        arrive(table, 4, 0, 4); // 2 leaves
        assertThat(left).containsExactly(new Left(Eviction.CAPACITY, 1, true));
        assertThat(arrive(table, 1, 0, 5).kind()).isEqualTo(Kind.REPEATED);
    }

    /** Lookups by key and by alias stay right while entries with both come and go many times over. */
    @Test
    void theIndexStaysRightWithAliasesThroughManyEvictions() {
        ConversationTable table = new ConversationTable(2000, HOUR, null);
        java.util.Random random = new java.util.Random(11);
        long[] recentAliases = new long[500];
        for (int i = 0; i < 100_000; i++) {
            long key = random.nextLong() | 1;
            long alias = random.nextLong() | 1;
            Link link = table.arrived(key, 0, 0, false, false, i);
            table.ended(link, key, alias, i);
            recentAliases[i % 500] = alias;
            if (i % 499 == 0 && i >= 500) {
                for (long held : recentAliases) {
                    long next = random.nextLong() | 1;
                    assertThat(table.arrived(next, held, 0, false, false, i).kind()).isEqualTo(Kind.NEXT);
                }
            }
        }
    }

    /** Lookups stay right while entries come and go through every slot of the index many times over. */
    @Test
    void theIndexStaysRightThroughManyEvictions() {
        ConversationTable table = new ConversationTable(1000, HOUR, null);
        java.util.Random random = new java.util.Random(7);
        long[] recent = new long[1000];
        for (int i = 0; i < 200_000; i++) {
            long key = random.nextLong() | 1;
            assertThat(arrive(table, key, 0, i).kind()).isEqualTo(Kind.FIRST);
            recent[i % 1000] = key;
            if (i % 997 == 0) {
                for (int k = 1; k <= recent.length; k++) { // oldest first: each moves to the tail in turn
                    long held = recent[(i + k) % recent.length];
                    if (held != 0) {
                        assertThat(arrive(table, held, 0, i).kind()).isEqualTo(Kind.REPEATED);
                    }
                }
            }
        }
        assertThat(table.size()).isEqualTo(1000);
    }

    /** The default cap holds at most 1 MiB, whatever passes through: the arrays are all it keeps. */
    @Test
    void atItsDefaultCapTheTableHoldsAtMostOneMebibyte() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        ConversationTable table = new ConversationTable(16_384, HOUR, null);
        long allocated = threads.getThreadAllocatedBytes(tid) - before;
        assertThat(allocated).as("bytes the table allocated, all kept").isLessThanOrEqualTo(1 << 20)
                .isGreaterThanOrEqualTo(16_384 * 37L);
        assertThat(table.retainedBytes()).isBetween(allocated - 1024, allocated + 1024);
        for (long i = 1; i <= 100_000; i++) {
            arrive(table, i, i - 1, i);
            end(table, i, i);
        }
        assertThat(table.size()).isEqualTo(16_384);
    }
}
