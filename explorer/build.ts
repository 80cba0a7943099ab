// Builds the explorer as one self-contained page (build/explorer.html: index.html with its bundled script inline),
// run by `make install`. A publish stores that page as a content-addressed object that catalog.json names, so any
// static mirror shows it, and no file of a dist is ever replaced but catalog.json.

import { readFile, mkdir, writeFile } from "node:fs/promises";
import { build } from "esbuild";

const SOURCES = new URL("./", import.meta.url);
const TARGET = new URL("../build/explorer.html", import.meta.url);
const SCRIPT_TAG = '<script type="module" src="app.js"></script>';

const result = await build({
  entryPoints: [new URL("main.ts", SOURCES).pathname],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "none",
  write: false,
  logLevel: "warning",
});
const html = await readFile(new URL("index.html", SOURCES), "utf8");
if (!html.includes(SCRIPT_TAG)) throw new Error(`explorer/index.html has no ${SCRIPT_TAG} to replace with the bundle`);
// inline: a "</script" inside the bundle's strings would end the element early
const script = result.outputFiles[0].text.replaceAll("</script", "<\\/script");
await mkdir(new URL("./", TARGET), { recursive: true });
await writeFile(TARGET, html.replace(SCRIPT_TAG, () => `<script type="module">${script}</script>`));
