// node validate_records.cjs SCHEMA.json FILE.jsonl...: validates every line of every file
// against the JSON Schema (draft 2020-12) with Ajv; exit 1 on any invalid line or no lines.
"use strict";
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020");
const addFormats = require("ajv-formats");

const [schemaPath, ...files] = process.argv.slice(2);
const ajv = new Ajv2020({ allErrors: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, "utf8")));
let records = 0;
let bad = 0;
for (const file of files) {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    records++;
    let rec;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      bad++;
      console.log(`${file}:${i + 1}: not JSON: ${e.message}`);
      return;
    }
    if (!validate(rec)) {
      bad++;
      console.log(`${file}:${i + 1}: ${ajv.errorsText(validate.errors, { separator: "\n  " })}`);
    }
  });
}
console.log(`${records} records, ${bad} invalid`);
process.exit(records > 0 && bad === 0 ? 0 : 1);
