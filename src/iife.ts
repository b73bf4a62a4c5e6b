// The browser build's entry: `<script src="laravel-echo-mercure.iife.js">` sets `window.EchoMercure`.
import Echo from "laravel-echo";

export { Echo };
export { MercureConnector } from "./connector/mercure-connector";
export { MercureEcho, encryptedPrivate } from "./connector/mercure-echo";
export { MercureError } from "./errors";
