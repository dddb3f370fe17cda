// Schemas shared by several routes (response bodies and reusable parameter pieces).
import Type from "typebox";

export const Temporal = Type.Object(
  {
    kind: Type.Union([Type.Literal("instantaneous"), Type.Literal("accumulated")]),
    interval: Type.Optional(Type.String({ description: "ISO 8601 duration of the accumulation, e.g. PT1H" })),
    interval_hours: Type.Optional(Type.Number()),
  },
  { description: "Whether a value is instantaneous or an amount accumulated over an interval ending at its time" },
);

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: "RFC 9457 problem details" },
);

export const Lat = Type.Number({ minimum: -90, maximum: 90, description: "Latitude in degrees north" });
export const Lon = Type.Number({
  minimum: -180,
  maximum: 360,
  description: "Longitude in degrees east; -180..180 and 0..360 are both accepted",
});
