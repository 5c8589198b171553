/**
 * How long a shutdown may take, past the split budget (DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS): the
 * drain lets requests in flight finish their upload or answer for DRAIN_EXTRA_SECONDS more, and
 * a process whose close is still held EXIT_MARGIN_SECONDS after that leaves anyway. Apart from
 * the drain plugin, so that start-up reads them without loading fastify.
 */
export const DRAIN_EXTRA_SECONDS = 5
export const EXIT_MARGIN_SECONDS = 5
