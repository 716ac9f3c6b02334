package dev.llmsidecar.includeusage;

import dev.llmsidecar.observe.TrafficEvent;

/**
 * What include_usage did, counted through the seam ({@link dev.llmsidecar.observe.TrafficObserver#count}) as the
 * proxy's own events are. It names no series: the app binds each constant to its series when it registers the feature,
 * in a switch without a default branch, so a new constant without its series does not compile.
 */
public enum UsageEvent implements TrafficEvent {
    /** The sidecar turned stream_options.include_usage on for a request. */
    USAGE_INJECTED,
    /** Not turned on, and why ({@link IncludeUsagePolicy.UsageSkip}). */
    USAGE_SKIPPED_CLIENT_DECLINED,
    USAGE_SKIPPED_STREAM_OPTIONS,
    USAGE_SKIPPED_HTTP10_CLIENT,
    USAGE_SKIPPED_LEARNING,
    USAGE_SKIPPED_ENGINE_REPORTS_USAGE,
    USAGE_SKIPPED_LAYOUT,
    USAGE_SKIPPED_CONTENT_LENGTH,
    USAGE_SKIPPED_COMPRESSION,
    USAGE_SKIPPED_ENGINE_REJECTS,
    /** Usage the sidecar asked for reached the client, and why ({@link IncludeUsagePolicy.UsageKept}). */
    USAGE_NOT_REMOVED_LAYOUT,
    USAGE_NOT_REMOVED_MEMBER,
    /** Usage-only chunks cut from an injected stream (counted by the number cut). */
    USAGE_CHUNKS_REMOVED,
    /** Usage members cut from chunks that stayed (counted by the number cut). */
    USAGE_MEMBERS_REMOVED,
    /** The client's own request sent in place of the edited one: the answer came compressed. */
    RETRY_COMPRESSED_AFTER_INJECTION,
    /** The client's own request sent in place of the edited one: the engine refused it (400, 422). */
    RETRY_INJECTION_REJECTED
}
