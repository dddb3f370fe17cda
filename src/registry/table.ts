// The registry as the README's Markdown table, so the documentation is generated from the data
// (test/registry/readme-table.test.ts fails when they drift apart).
import { temporalText } from "./temporal.ts";
import { VARIABLES, type VariableEntry } from "./variables.ts";

export function registryTable(entries: readonly VariableEntry[] = VARIABLES): string {
  const rows = entries.map((v) => {
    const names = [v.name, ...v.aliases].map((a) => `\`${a}\``).join(", ");
    return `| \`${v.name}\` | ${names} | ${v.units} | ${temporalText(v.temporal)} | ${v.sources ?? ""} |`;
  });
  return [
    "| canonical | names that resolve to it (any case) | units | temporal kind (default) | where the names come from |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
