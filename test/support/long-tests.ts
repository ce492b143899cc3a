/**
 * `npm run test:long` sets MM_LONG_TESTS=1: the soak and the replays then run their long forms (a 60 s
 * soak, every shipped trajectory). `npm test` runs the short forms, which guard the same properties on
 * fewer requests.
 */
export const LONG_TESTS = process.env.MM_LONG_TESTS === "1";
