// Whispers (client events, laravel-mercure §7): what the connector wires in. Sending lives in
// `publish.ts`, receiving in `whisper-streams.ts`; both share the envelope rules and the error factory.
export { isGuarded } from "./envelope";
export {
    assertCanWhisper,
    DEFAULT_AUTH_WAIT,
    DEFAULT_PUBLISH_TIMEOUT,
    WhisperPublisher,
    type WhisperPublisherHost,
    type WhisperPublisherOptions,
    type WhisperResult,
    type WhisperTarget,
} from "./publish";
export { diagnoseWhisper, type WhisperCause, type WhisperDiagnostics, type WhisperFailureReport } from "./whisper-diagnosis";
export { whisperError, type WhisperFailure } from "./whisper-error";
export {
    WhisperStreams,
    type WhisperAuth,
    type WhisperStream,
    type WhisperStreamFactory,
    type WhisperStreamHandlers,
    type WhisperStreamsHost,
    type WhisperStreamsOptions,
} from "./whisper-streams";
