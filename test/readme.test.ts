// README stays true: every make target is documented, and its example requests pass the contract check.

import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { validatorFor } from "../schemas/validate.js";
import { checkRequest } from "../api/request.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const makefile = readFileSync(new URL("../Makefile", import.meta.url), "utf8");
const docs = suite("readme");

docs("readme - documents every make target and variable", () => {
  const targets = [...makefile.matchAll(/^([a-z]+):.*## /gm)].map((m) => m[1]);
  assert.ok(targets.length >= 10, `targets: ${targets}`);
  for (const t of targets) assert.ok(readme.includes(`make ${t}`), `make ${t} is not in README`);
  for (const v of ["SOURCES", "DIST", "FROM", "TO", "PORT", "HOST"]) assert.ok(readme.includes(`\`${v}\``), v);
});

docs("readme - every example data request is a valid contract request", () => {
  const bodies = [...readme.matchAll(/-d '(\{[^']*\})'/g)].map((m) => m[1]);
  assert.ok(bodies.length >= 2, `found ${bodies.length} example bodies`);
  for (const body of bodies) {
    const spec = JSON.parse(body);
    assert.ok(validatorFor("data-request.schema.json")(spec), body);
    assert.is(checkRequest(spec).region.bbox.length, 4);
  }
});

docs.run();
