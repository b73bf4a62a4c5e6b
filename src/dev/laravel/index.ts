/**
 * Node-only dev app that behaves like Laravel 13's `mercure` broadcasting driver (auth endpoint, cookie,
 * publishing), for end-to-end tests and the demo.
 */
export { BroadcastingApp, type AuthRequestRecord } from "./app";
export type { BroadcastInput, Publication } from "./broadcaster";
export { buildPublications } from "./broadcaster";
export { channelKind, normaliseChannelName, type ChannelKind } from "./channels";
export { buildAuthCookie, cookieDomain, DEV_USER_COOKIE } from "./cookie";
export { channelJwk, deriveChannelKey, JWE_PROTECTED_HEADER, openJwe, sealJwe, type ChannelJwk } from "./encrypter";
export { LaravelDevError, type LaravelDevErrorCode } from "./errors";
export { phpJsonEncode } from "./json";
export {
    DEFAULT_TOPIC_PREFIX,
    type BroadcastingAppOptions,
    type ChannelCallback,
    type DevUser,
    type UrlOption,
} from "./options";
export { publisherClaims } from "./publisher-token";
export {
    AUTHORIZATION_DETAIL_TYPE,
    subscriberAuthorizationDetails,
    type AuthorizationDetail,
} from "./subscriber-token";
export { channelTopic, presencePattern, whisperTopic } from "./topics";
