// The DAP2 wire format (OPeNDAP DAP 2.0, ESE-RFC-004.1.2), as this server writes it: the DDS and DAS texts, the
// .dods body, the error body. Declared once, here; the dataset (api/dap/dataset.ts) says what goes in them.
//
// - DDS: `Dataset {`, one declaration a variable, `} <name>;`. An array is `<Type> <name>[<dim> = <size>]...;`, a
//   scalar `<Type> <name>;`. A Grid is `Grid {`, ` ARRAY:` and its array, ` MAPS:` and one array a dimension, `} <name>;`.
//   A Structure is `Structure {`, its members, `} <name>;` (a Grid of which only some parts were asked).
// - DAS: `Attributes {`, one container a variable and `NC_GLOBAL` for the dataset's own, each attribute
//   `<Type> <name> <value>;`. Strings are double-quoted with `"` and `\` escaped by `\`; a float NaN is `NaN`.
// - .dods: the DDS of exactly what is sent (constrained), the line `Data:`, then XDR, big-endian, variables in DDS
//   order: a scalar is its value; an array is its length twice (two u32), then its values; a Grid is its array, then
//   its maps; a Structure its members. Int32 and Float32 take 4 bytes a value, Float64 8. A float32 NaN is sent as
//   the canonical 0x7fc00000, so every missing value has the same bits.
// - Error: `Error {`, `    code = <n>;`, `    message = "<text>";`, `};`, answered with the HTTP status it names.
// - Every answer names itself in `Content-Description` (dods-dds, dods-das, dods-data, dods-error), and the server in
//   `XDODS-Server`, `XOPeNDAP-Server` and `XDAP` (the protocol version libdap's servers name): netCDF-Java refuses a
//   200 with neither XDODS-Server nor XDAP, and takes a plain URL for DAP2 only when its .dds says dods-dds.
//
// The module uses DataView and typed arrays only (no node: modules), as every api/ writer.

import { borrowBody } from "../bytes.js";

export type DapType = "Int32" | "Float32" | "Float64";

const BYTES: Record<DapType, number> = { Int32: 4, Float32: 4, Float64: 8 };

/** An array (or, without dims, a scalar) of the DDS. */
export interface DapArray {
  kind: "array";
  name: string;
  type: DapType;
  dims: readonly { name: string; size: number }[];
}

export interface DapGrid {
  kind: "grid";
  name: string;
  array: DapArray;
  maps: readonly DapArray[];
}

export interface DapStructure {
  kind: "structure";
  name: string;
  members: readonly DapArray[];
}

export type DapVariable = DapArray | DapGrid | DapStructure;

/** Attributes of one DAS container: numbers carry their DAP2 type, text is a String. */
export type DapAttributes = readonly (readonly [name: string, value: string | { type: DapType; value: number }])[];

export const DAP_HEADERS = { "XDODS-Server": "dods/3.2", "XOPeNDAP-Server": "climate-data-service/dap2", XDAP: "3.2" } as const;
export const DDS_TYPE = "text/plain; charset=utf-8";
export const DATA_TYPE = "application/octet-stream";

function declareArray(a: DapArray, indent: string): string {
  return `${indent}${a.type} ${a.name}${a.dims.map((d) => `[${d.name} = ${d.size}]`).join("")};\n`;
}

function declare(v: DapVariable, indent: string): string {
  if (v.kind === "array") return declareArray(v, indent);
  const inner = `${indent}    `;
  if (v.kind === "structure") return `${indent}Structure {\n${v.members.map((m) => declareArray(m, inner)).join("")}${indent}} ${v.name};\n`;
  const maps = v.maps.map((m) => declareArray(m, inner)).join("");
  return `${indent}Grid {\n${indent}  ARRAY:\n${declareArray(v.array, inner)}${indent}  MAPS:\n${maps}${indent}} ${v.name};\n`;
}

/** The DDS text of a dataset's (or an answer's) variables. */
export function writeDds(dataset: string, variables: readonly DapVariable[]): string {
  return `Dataset {\n${variables.map((v) => declare(v, "    ")).join("")}} ${dataset};\n`;
}

/** A DAS string: double-quoted, `"` and `\` escaped. */
const quote = (text: string): string => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

function writeNumber(value: number): string {
  return Number.isNaN(value) ? "NaN" : String(value);
}

/** The DAS text: one container a variable, in order, and NC_GLOBAL. */
export function writeDas(containers: readonly (readonly [name: string, attributes: DapAttributes])[]): string {
  const body = containers.map(([name, attributes]) => {
    const lines = attributes.map(([key, v]) => (typeof v === "string" ? `        String ${key} ${quote(v)};\n` : `        ${v.type} ${key} ${writeNumber(v.value)};\n`));
    return `    ${name} {\n${lines.join("")}    }\n`;
  });
  return `Attributes {\n${body.join("")}}\n`;
}

/** The DAP2 error body of a status and message. */
export function writeError(code: number, message: string): string {
  return `Error {\n    code = ${code};\n    message = ${quote(message)};\n};\n`;
}

/** The arrays of the variables, in the order their values are sent. */
export function listSent(variables: readonly DapVariable[]): DapArray[] {
  return variables.flatMap((v) => (v.kind === "array" ? [v] : v.kind === "grid" ? [v.array, ...v.maps] : [...v.members]));
}

const countOf = (a: DapArray): number => a.dims.reduce((n, d) => n * d.size, 1);

const DATA_MARK = "Data:\n";

/**
 * A .dods body being written: its DDS and `Data:` line, and each sent array's place. `values(i)` gives array i's
 * values as a float32 view over the body (the one array laid out 4-byte aligned: `aligned`), which its writer fills
 * with big-endian words (api/cube.ts readHyperslab's bigEndian: no second pass); `set(i)` writes another's now.
 */
export class DataBody {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  private readonly offsets: number[];

  constructor(
    dataset: string,
    variables: readonly DapVariable[],
    private readonly aligned = -1,
  ) {
    const head = new TextEncoder().encode(writeDds(dataset, variables) + DATA_MARK);
    this.sent = listSent(variables);
    let at = head.byteLength;
    this.offsets = this.sent.map((a) => {
      at += a.dims.length > 0 ? 8 : 0; // an array's length, twice
      const start = at;
      at += countOf(a) * BYTES[a.type];
      return start;
    });
    // the aligned array's values start on a multiple of 4 of the buffer: a float32 view of them needs no copy
    const pad = aligned < 0 ? 0 : (4 - (this.offsets[aligned] % 4)) % 4;
    this.bytes = borrowBody(at, pad);
    this.bytes.set(head);
    this.view = new DataView(this.bytes.buffer, pad, at);
    this.sent.forEach((a, i) => {
      if (a.dims.length === 0) return;
      this.view.setUint32(this.offsets[i] - 8, countOf(a));
      this.view.setUint32(this.offsets[i] - 4, countOf(a));
    });
  }

  private readonly sent: DapArray[];

  /** The aligned array's values, to fill with big-endian words (every NaN the canonical 0x7fc00000). */
  values(i: number): Float32Array {
    if (i !== this.aligned || this.sent[i].type !== "Float32") throw new Error(`array ${i} is not the aligned float32 array of this body`);
    return new Float32Array(this.bytes.buffer, this.bytes.byteOffset + this.offsets[i], countOf(this.sent[i]));
  }

  /** Writes array i's values now, big-endian. */
  set(i: number, values: ArrayLike<number>): void {
    const { type } = this.sent[i];
    const at = this.offsets[i];
    for (let k = 0; k < values.length; k++) {
      if (type === "Int32") this.view.setInt32(at + 4 * k, values[k]);
      else if (type === "Float64") this.view.setFloat64(at + 8 * k, values[k]);
      else this.view.setFloat32(at + 4 * k, values[k]);
    }
  }

}
