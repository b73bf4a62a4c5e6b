import type { MercureError } from "../errors";
import type { Diagnosis } from "../discovery/classify";
import { loadDiagnostics } from "../discovery/load";
import type { HubStream } from "../transport/hub-stream";
import type { Platform } from "../transport/platform";

/** A named cause of a stream failure, and the error a channel gets for it. */
export interface NamedCause {
    /** What the probe found. */
    readonly diagnosis: Diagnosis;
    /** The actionable `MercureError` for one channel. */
    error(channel: string): MercureError;
}

/**
 * Diagnoses the first terminal stream failure of each failure streak (a streak ends when a stream opens,
 * or when the connector winds down): one probe of the hub, not one per retry.
 */
export class StreamDiagnosis {
    /** Whether the current failure streak was diagnosed already (or is being diagnosed). */
    #diagnosed = false;

    /** A stream opened or the connector wound down: the next terminal failure starts a new streak. */
    reset(): void {
        this.#diagnosed = false;
    }

    /**
     * Probe `platform`'s hub for the first failure of the streak, as `stream` failed (loading the diagnostics chunk on first use);
     * null for the later ones, when the hub accepts the request now, when aborted, or when the chunk could
     * not be loaded (the `stream_error` already reported stands). Never rejects.
     */
    async once(platform: Platform, stream: HubStream, tokenExpiresAt: number | null, signal: AbortSignal): Promise<NamedCause | null> {
        if (this.#diagnosed) return null;
        this.#diagnosed = true;
        try {
            const { diagnose, diagnosisError } = await loadDiagnostics();
            // The probe reproduces the failed request's number of matchers, never its topics.
            const diagnosis = await diagnose({ hub: platform.hub, fetch: platform.fetch, failure: { kind: "stream" }, subscribeUrl: stream.url, tokenExpiresAt, signal });
            return diagnosis === null ? null : { diagnosis, error: (channel) => diagnosisError(diagnosis, channel) };
        } catch {
            return null;
        }
    }
}
