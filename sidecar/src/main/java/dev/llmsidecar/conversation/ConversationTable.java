package dev.llmsidecar.conversation;

/**
 * The turns the sidecar saw lately, by the keyed digest of their history, so the next turn of a conversation can find
 * the one it follows: its turn number, its conversation's number and when that turn ended (the gap between turns).
 * Nothing but 64-bit digests, times and counts is kept, in primitive arrays of a fixed size, whatever the traffic: 41
 * bytes an entry and an index of 4 bytes a cell, the power of two at or above 3 x {@code capacity} (16 384 entries: 57
 * bytes each, 912 KiB), and no text can be read back.
 *
 * <p>An entry is found by its history's digest, or by one alias: the digest of the response id the engine gave it
 * (Responses API {@code previous_response_id}) or of the conversation it belongs to (an alias that moves to each new
 * turn).
 *
 * <p>Bounded twice: past {@code capacity} the oldest entry leaves (counted as {@link Eviction#CAPACITY}), and an entry
 * older than {@code maxAgeNanos} leaves at the next call (counted as {@link Eviction#AGE}). Entries leave in the order
 * they came, so both are a step of one ring. One lock: a call is a few array reads per request, never per token.
 */
public final class ConversationTable {

    /** Why an entry left. */
    public enum Eviction {
        CAPACITY, AGE
    }

    /** Told of every entry that leaves (on the calling thread, under the table's lock: keep it short). */
    public interface Listener {
        /**
         * @param turns the turn the entry was
         * @param lastOfItsConversation no later turn linked to it: its conversation had {@code turns} turns here
         */
        void evicted(Eviction why, int turns, boolean lastOfItsConversation);
    }

    /** How a request relates to what the table holds. */
    public enum Kind {
        /** No earlier turn found: the first of its conversation here (cold). */
        FIRST,
        /** The next turn of one that ended: the gap is known. */
        NEXT,
        /** The next turn of one that has not ended yet (a client that did not wait): no gap, counted. */
        NEXT_OF_UNFINISHED,
        /** The same history sent again (a regeneration): no new turn, no gap. */
        REPEATED
    }

    /**
     * @param turn the request's turn in its conversation (1 for the first one here); 0: unknown (its conversation's
     *     first turn here named an id the table did not know)
     * @param gapNanos arrival minus the end of the turn it follows; -1 when there is none ({@link Kind#NEXT} only)
     * @param modelNanosBefore for a request that answers a tool's result: the time in the model of the turn it follows
     *     (arrival to end) when that turn did not itself answer a tool (it is the agent's first call, whose time is
     *     agent time only now that a tool turn follows it); else -1
     * @param conversation its conversation's number in this process: a count of first turns (wrapping), which every
     *     later turn of it takes on; what the trace recorder names a conversation by (under a key of its own). 0: none
     * @param entry where the request's own entry is, for {@link #ended}
     */
    public record Link(Kind kind, int turn, long gapNanos, long modelNanosBefore, int conversation, int entry) {
    }

    private static final long IN_FLIGHT = Long.MIN_VALUE;
    private static final byte CONTINUED = 1;
    private static final byte AFTER_TOOL = 2;
    /** Its conversation's first turn here named an id the table did not know: its turn number is unknown. */
    private static final byte UNKNOWN_TURN = 8;
    /** Moved to the ring's tail (a regeneration): its old slot waits for the head to pass it, indexed no more. */
    private static final byte MOVED = 4;

    private final int capacity;
    private final long maxAgeNanos;
    private final Listener listener;
    // the ring of entries, oldest at head
    private final long[] keys;
    private final long[] aliases;
    private final long[] ends;
    private final long[] stored;
    private final int[] turns;
    private final int[] conversations;
    private final byte[] flags;
    // open addressing over the ring's slots for keys and aliases: at most 2 x capacity cells used of at least
    // 3 x capacity, so probes stay short
    private final int[] index;
    private final int mask;
    private int head;
    private int size;
    /** Slots of the ring whose entry moved to the tail (counted in size until the head passes them). */
    private int moved;
    /** The last conversation number given (0 is never one). */
    private int lastConversation;

    public ConversationTable(int capacity, long maxAgeNanos, Listener listener) {
        if (capacity < 1 || capacity > (1 << 24)) {
            throw new IllegalArgumentException("capacity must be 1 to 16777216: " + capacity);
        }
        if (maxAgeNanos <= 0) {
            throw new IllegalArgumentException("the age limit must be positive: " + maxAgeNanos);
        }
        this.capacity = capacity;
        this.maxAgeNanos = maxAgeNanos;
        this.listener = listener;
        keys = new long[capacity];
        aliases = new long[capacity];
        ends = new long[capacity];
        stored = new long[capacity];
        turns = new int[capacity];
        conversations = new int[capacity];
        flags = new byte[capacity];
        index = new int[Integer.highestOneBit(Math.max(2, capacity) * 3 - 1) << 1];
        mask = index.length - 1;
    }

    /**
     * A request arrived whose history has digest {@code key} (its messages but a trailing model run) and which
     * follows the turn whose history had digest {@code previousKey} (its messages before its last model run that
     * a non-model message follows), or whose alias is {@code previousKey}; 0 when it follows none (a first turn).
     *
     * @param alias an alias the new entry takes from whichever entry holds it (a conversation's id); 0: none. With an
     *     alias the request is never a regeneration: the id, not the history, says where it belongs.
     * @param afterTool the request answers a tool's result
     * @param byId {@code previousKey} is the digest of an id (a response's, a conversation's), not of a history: when
     *     the table does not know it, the turn is unknown, and so are the turns that follow it
     */
    public synchronized Link arrived(long key, long previousKey, long alias, boolean afterTool, boolean byId,
            long nowNanos) {
        expire(nowNanos);
        if (alias == 0) {
            int own = find(key);
            if (own >= 0) {
                // answered again: the entry moves to the tail, so its age and the next turn's gap run from this answer
                int turn = turns[own];
                int conversation = conversations[own];
                byte continued = (byte) (flags[own] & (CONTINUED | UNKNOWN_TURN));
                remove(own);
                // the old response's id stays behind: the next turn names the answer it got now (ended)
                int entry = store(key, 0, turn, conversation, afterTool, nowNanos);
                flags[entry] |= continued;
                return new Link(Kind.REPEATED, (continued & UNKNOWN_TURN) != 0 ? 0 : turn, -1, -1, conversation,
                        entry);
            }
        }
        int before = previousKey == 0 ? -1 : find(previousKey);
        Kind kind;
        int turn;
        long gap = -1;
        long modelBefore = -1;
        boolean unknown;
        int conversation;
        if (before < 0) {
            kind = Kind.FIRST;
            turn = 1;
            unknown = byId && previousKey != 0;
            lastConversation = lastConversation == -1 ? 1 : lastConversation + 1; // 0 stays "none"
            conversation = lastConversation;
        } else {
            flags[before] |= CONTINUED;
            turn = turns[before] + 1;
            conversation = conversations[before];
            unknown = (flags[before] & UNKNOWN_TURN) != 0;
            if (ends[before] == IN_FLIGHT) {
                kind = Kind.NEXT_OF_UNFINISHED;
            } else {
                kind = Kind.NEXT;
                gap = Math.max(0, nowNanos - ends[before]);
                if (afterTool && (flags[before] & AFTER_TOOL) == 0) {
                    modelBefore = Math.max(0, ends[before] - stored[before]);
                }
            }
        }
        if (alias != 0) {
            int holder = find(alias);
            if (holder >= 0 && aliases[holder] == alias) {
                unindex(holder, alias);
                aliases[holder] = 0;
            }
        }
        int entry = store(key, alias, turn, conversation, afterTool, nowNanos);
        if (unknown) {
            flags[entry] |= UNKNOWN_TURN;
        }
        return new Link(kind, unknown ? 0 : turn, gap, modelBefore, conversation, entry);
    }

    /**
     * The request of {@code link} (whose key was {@code key}) ended, its answer's last byte at {@code nowNanos}.
     *
     * @param alias what the next turn may name it by (the digest of its response id); 0: none
     */
    public synchronized void ended(Link link, long key, long alias, long nowNanos) {
        ended(link.entry(), key, alias, nowNanos);
    }


    private void ended(int entry, long key, long alias, long nowNanos) {
        if (entry < 0 || entry >= capacity || keys[entry] != key || !live(entry)) {
            return; // it left the table while it ran
        }
        ends[entry] = nowNanos;
        if (alias != 0 && aliases[entry] == 0 && find(alias) < 0) {
            aliases[entry] = alias;
            insert(alias, entry);
        }
    }

    /** The entries held (a moved entry once). */
    /**
     * The request of {@code link} failed before the engine served it (an error status): its entry leaves, so a resend
     * links as it would have (the engine never held its prefix).
     */
    public synchronized void forget(Link link, long key) {
        int entry = link.entry();
        if (entry >= 0 && entry < capacity && keys[entry] == key && live(entry)) {
            remove(entry);
        }
    }

    /** Takes an entry out of the index; its slot waits for the head to pass it ({@link #MOVED}). */
    private void remove(int slot) {
        unindex(slot, keys[slot]);
        if (aliases[slot] != 0) {
            unindex(slot, aliases[slot]);
        }
        flags[slot] = MOVED;
        moved++;
    }

    public synchronized int size() {
        return size - moved;
    }

    /** Bytes the table holds, whatever it holds: its arrays. */
    public long retainedBytes() {
        return 16L * 8 /* array headers */ + capacity * (8L + 8 + 8 + 8 + 4 + 4 + 1) + index.length * 4L;
    }

    private int store(long key, long alias, int turn, int conversation, boolean afterTool, long nowNanos) {
        if (size == capacity) {
            evictHead(Eviction.CAPACITY);
        }
        int slot = (head + size) % capacity;
        keys[slot] = key;
        aliases[slot] = alias;
        ends[slot] = IN_FLIGHT;
        stored[slot] = nowNanos;
        turns[slot] = turn;
        conversations[slot] = conversation;
        flags[slot] = afterTool ? AFTER_TOOL : 0;
        size++;
        insert(key, slot);
        if (alias != 0) {
            insert(alias, slot);
        }
        return slot;
    }

    private boolean live(int slot) {
        return ((slot - head + capacity) % capacity) < size && (flags[slot] & MOVED) == 0;
    }

    // an index cell: 0 empty, else (slot + 1) * 2, plus 1 when it holds the slot's alias rather than its key
    private void insert(long key, int slot) {
        int i = spread(key) & mask;
        while (index[i] != 0) {
            i = (i + 1) & mask;
        }
        index[i] = (slot + 1) * 2 + (aliases[slot] == key && keys[slot] != key ? 1 : 0);
    }

    private long keyOf(int cell) {
        int slot = cell / 2 - 1;
        return (cell & 1) == 0 ? keys[slot] : aliases[slot];
    }

    private void expire(long nowNanos) {
        while (size > 0 && nowNanos - stored[head] > maxAgeNanos) {
            evictHead(Eviction.AGE);
        }
    }

    private void evictHead(Eviction why) {
        int slot = head;
        head = (head + 1) % capacity;
        size--;
        if ((flags[slot] & MOVED) != 0) {
            moved--;
            return; // moved on: not indexed, not a conversation's end
        }
        unindex(slot, keys[slot]);
        if (aliases[slot] != 0) {
            unindex(slot, aliases[slot]);
        }
        if (listener != null) {
            listener.evicted(why, turns[slot], (flags[slot] & CONTINUED) == 0);
        }
    }

    private int find(long key) {
        int i = spread(key) & mask;
        for (int cell = index[i]; cell != 0; cell = index[i]) {
            if (keyOf(cell) == key) {
                return cell / 2 - 1;
            }
            i = (i + 1) & mask;
        }
        return -1;
    }

    /**
     * Removes a slot's index entry under one of its keys, shifting back the entries probed past it (no tombstones to
     * grow the probes).
     */
    private void unindex(int slot, long key) {
        int i = spread(key) & mask;
        for (int cell = index[i]; cell / 2 - 1 != slot || keyOf(cell) != key; cell = index[i]) {
            if (cell == 0) {
                return; // not indexed under it
            }
            i = (i + 1) & mask;
        }
        int hole = i;
        for (int j = (hole + 1) & mask; index[j] != 0; j = (j + 1) & mask) {
            int home = spread(keyOf(index[j])) & mask;
            // the entry at j may move to the hole when its home is not in (hole, j]
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                index[hole] = index[j];
                hole = j;
            }
        }
        index[hole] = 0;
    }

    private static int spread(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    @Override
    public synchronized String toString() {
        return "ConversationTable[" + size + "/" + capacity + "]";
    }
}
