import { hmac } from "@oslojs/crypto/hmac";
import { SHA256 } from "@oslojs/crypto/sha2";
import { encodeHexLowerCase } from "@oslojs/encoding";

const encoder = new TextEncoder();

/**
 * `X-Service-Signature` of webhook deliveries and action calls (DESIGN.md, Webhook signing computation):
 * `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256>` keyed by the secret string as UTF-8, over `${t}.${rawBody}`.
 * Byte for byte the scheme stripe-node's `webhooks.constructEventAsync` verifies (proved with the real `stripe` package in test/webhook-delivery.test.ts).
 */
export function signatureHeader(secret: string, rawBody: string, unixSeconds: number): string {
  const mac = hmac(SHA256, encoder.encode(secret), encoder.encode(`${unixSeconds}.${rawBody}`));
  return `t=${unixSeconds},v1=${encodeHexLowerCase(mac)}`;
}
