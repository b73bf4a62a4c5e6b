// The eagerly loaded half of the crypto module (laravel-mercure §6): small enough for the core bundle.
// The JWE code lives in `./jwe`, reached only through `loadCrypto()`'s dynamic import.
export { cryptoError, hasWebCrypto, type CryptoErrorCode } from "./crypto-error";
export {
    EncryptedChannels,
    type ChannelFailure,
    type DecryptFailure,
    type DeliverDecrypted,
    type EncryptedChannelsOptions,
} from "./encrypted-channels";
export type { DecryptedEnvelope } from "./jwe";
export { loadCrypto, type CryptoModule } from "./load";
