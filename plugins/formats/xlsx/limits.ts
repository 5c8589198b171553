/**
 * The inflated-size budget's environment variable and range, without the plugin itself: the
 * service validates the variable at start (server/env.ts) without registering the plugin.
 */
export const INFLATED_ENV = 'DOCSPLIT_MAX_INFLATED_BYTES'
export const DEFAULT_MAX_INFLATED_BYTES = 64 * 2 ** 20
export const MIN_INFLATED_BYTES = 1024
export const MAX_INFLATED_BYTES = 2 ** 31 - 1
