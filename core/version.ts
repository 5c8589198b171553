/** The engine version, reported in every response's metadata (kept equal to package.json by a test). */
export const VERSION = '0.1.0'
