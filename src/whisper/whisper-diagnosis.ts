import type { DiagnosedFailure, Diagnosis } from "../discovery/classify";
import { loadDiagnostics, type DiagnosticsModule } from "../discovery/load";
import type { MercureError } from "../errors";
import type { FetchLike } from "../transport/platform";

/*
 * Naming the cause of a whisper failure (issue 10): the whisper side's counterpart of the connector's
 * `StreamDiagnosis`. It lives in the lazy whisper chunk and loads the diagnostics chunk only after a
 * failure, through `loadDiagnostics()`.
 */

/**
 * What whisper diagnoses need from the connector, given by `Whispers` to the publisher and the streams
 * (none of these may throw).
 */
export interface WhisperDiagnostics {
    /**
     * Where a probe about `channel` goes now: the hub and the connector's fetch (its cookies travel with
     * it); null when the channel is not joined (left, evicted, not authorized) or the connector is
     * disconnected. Asked again after each wait: a diagnosis for a channel that answers null is dropped.
     */
    probe(channel: string): { readonly hub: URL; readonly fetch: FetchLike } | null;
    /** When the cookie the connector obtained expires, in ms since the epoch; null (or absent) when unknown. */
    tokenExpiresAt?(): number | null;
    /** Load `diagnose()` and `diagnosisError()`; default the memoised dynamic import {@link loadDiagnostics}. */
    load?(): Promise<Pick<DiagnosticsModule, "diagnose" | "diagnosisError">>;
}

/** A named cause of a whisper failure on one channel. */
export interface WhisperCause {
    /** What the probe found; `retry` false means retrying cannot help until the configuration changes. */
    readonly diagnosis: Diagnosis;
    /** The actionable `MercureError` for the channel (its code is the diagnosis code). */
    readonly error: MercureError;
}

/** One whisper failure to diagnose. */
export interface WhisperFailureReport {
    /** The channel whose whisper stream or whisper POST failed. */
    readonly channel: string;
    /** What failed (`whisper_stream`, or `whisper_post` with its status). */
    readonly failure: DiagnosedFailure;
    /** The subscribe URL of the whisper stream that failed (its number of matchers is reproduced). */
    readonly subscribeUrl?: string;
    /** Aborted when the connector disconnects: then nothing is reported. */
    readonly signal: AbortSignal;
    /** Whether the failure still matters (the caller's own bookkeeping, e.g. its stream has not opened since). */
    readonly current?: () => boolean;
}

/**
 * Probe the hub once about a whisper failure (loading the diagnostics chunk on first use) and name its
 * cause. Null when the hub accepts the same request now, when the chunk could not be loaded (the error
 * already reported stands), or when, after either wait, the signal was aborted, the channel is no longer
 * joined or the failure no longer current. Never rejects.
 */
export async function diagnoseWhisper(diagnostics: WhisperDiagnostics, report: WhisperFailureReport): Promise<WhisperCause | null> {
    const { channel, signal } = report;
    const live = () => !signal.aborted && diagnostics.probe(channel) !== null && (report.current?.() ?? true);
    try {
        const { diagnose, diagnosisError } = await (diagnostics.load ?? loadDiagnostics)();
        // The chunk took its time: the channel may have been left, or the connector disconnected.
        const target = live() ? diagnostics.probe(channel) : null;
        if (target === null) return null;
        const diagnosis = await diagnose({
            hub: target.hub,
            fetch: target.fetch,
            failure: report.failure,
            subscribeUrl: report.subscribeUrl ?? null,
            tokenExpiresAt: diagnostics.tokenExpiresAt?.() ?? null,
            signal,
        });
        return diagnosis === null || !live() ? null : { diagnosis, error: diagnosisError(diagnosis, channel) };
    } catch {
        return null;
    }
}
