// The query family's face: what callers outside api/ (the mirror client, the explorer, the landing page) need of a
// data request, and nothing else of api/query/ (test/house.test.ts holds them to it). Nothing inside api/ imports it.

export { makeDataRequest } from "./request.js";
