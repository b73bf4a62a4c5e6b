import type { Diagnosis } from "../discovery/classify";
import { loadDiagnostics } from "../discovery/load";
import { MercureError } from "../errors";
import { channelKind } from "../topic/channel-kind";
import type { HubStream } from "../transport/hub-stream";
import type { Platform } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";

/*
 * The probe that names why a stream failed for good: a chunk of its own, loaded at the first failure that needs it
 * (see `StreamEvents`), which loads the diagnostics chunk in turn. A page whose streams never fail downloads neither.
 */

/** A named cause of a stream failure, and the error a channel gets for it. */
interface NamedCause {
    /** What the probe found. */
    readonly diagnosis: Diagnosis;
    /** The actionable `MercureError` for one channel. */
    error(channel: string): MercureError;
}

/**
 * Probe the hub of `host` once for `stream`'s terminal failure (the first of a failure streak: `StreamEvents` counts)
 * and report the cause it names on the stream's channels; a configuration that must change first, or a `fatal` refusal
 * whatever the probe finds, stops the connector with `failed`. Nothing happens when `disconnect()` ran since
 * `generation` or a stream opened meanwhile: the failure is history then. Never rejects.
 */
export async function diagnoseStream(host: ConnectorHost, stream: HubStream, fatal: boolean, generation: number): Promise<void> {
    const platform = host.hub.platform;
    if (platform === null) return;
    const named = await probe(platform, stream, host.cookieRefresh.expiresAt(), host.signal());
    if (generation !== host.generation() || host.streams.current?.isOpen() === true) return;
    if (named === null) return void (fatal && host.settle(() => host.stop("failed")));
    host.log?.("diagnosis", { code: named.diagnosis.code, retry: named.diagnosis.retry });
    host.settle(() => {
        host.reportEach(stream.channels, named.error);
        if (fatal || !named.diagnosis.retry) host.stop("failed");
    });
}

/**
 * Probe `platform`'s hub as `stream` failed (a `fetch` reads what `EventSource` hides), loading the diagnostics chunk;
 * null when the hub accepts the request now, when aborted, or when the chunk did not load (the `stream_error` already
 * reported stands).
 */
async function probe(platform: Platform, stream: HubStream, tokenExpiresAt: number | null, signal: AbortSignal): Promise<NamedCause | null> {
    try {
        const { diagnose, diagnosisError } = await loadDiagnostics();
        // The probe reproduces the failed request's number of matchers, never its topics.
        const diagnosis = await diagnose({ hub: platform.hub, fetch: platform.fetch, failure: { kind: "stream" }, subscribeUrl: stream.url, tokenExpiresAt, signal });
        if (diagnosis === null) return null;
        const hint = diagnosis.status === 401 ? tokenSizeHint(stream.channels) : "";
        return {
            diagnosis,
            error: (channel) => {
                const error = diagnosisError(diagnosis, channel);
                return hint === "" ? error : new MercureError(error.code, error.message + hint, { channel, status: error.status, cause: error.cause });
            },
        };
    } catch {
        return null;
    }
}

/**
 * What the channels of a stream refused with 401 may have done to the cookie, added to the named cause. Laravel's
 * cookie grows with every guarded channel: about 176 bytes for a private one (its topic and its whisper
 * topic) and 580 for a presence one (measured by `npm run bench`), and browsers keep at most 4,096 bytes of
 * a cookie, so past about 19 private or 6 presence channels the browser drops it and the hub answers 401.
 * The reference hub also rejects tokens with more than 100 topic grants (two per private channel, three per
 * presence channel).
 */
function tokenSizeHint(channels: Iterable<string>): string {
    let grants = 0;
    let bytes = 0;
    for (const name of channels) {
        const kind = channelKind(name);
        grants += kind === "presence" ? 3 : kind === "public" ? 0 : 2;
        bytes += kind === "presence" ? 580 : kind === "public" ? 0 : 176;
    }
    return (
        (bytes > 3_500
            ? ` The hub cookie of this many guarded channels outgrows the 4,096 bytes a browser keeps (about 19 private or 6 presence channels fit).`
            : "") +
        (grants > 100
            ? ` With ${grants} topic grants in the cookie, a hub capping tokens at 100 (the reference hub does) refuses it.`
            : "")
    );
}
