// Schemas shared by several routes (response bodies and reusable parameter pieces).
import Type from "typebox";

export const Temporal = Type.Object(
  {
    kind: Type.Union(
      ["instantaneous", "accumulated", "mean", "maximum", "minimum"].map((k) => Type.Literal(k)),
      { description: "What a value is: an instant, or an amount, mean, maximum or minimum over a window" },
    ),
    window: Type.Optional(
      Type.Union(
        ["point", "fixed", "previous_step", "since_start", "since_reset", "undecided"].map((k) => Type.Literal(k)),
        {
          description:
            "The window ending at the valid time: fixed (interval), previous_step (from the previous lead), " +
            "since_start (from the run's start), since_reset (from the last reset, every reset_hours after the " +
            "run's start: GFS-style buckets, found from the values), undecided (since the start or since a " +
            "periodic reset: the store does not say which; no intervals are stated)",
        },
      ),
    ),
    interval: Type.Optional(Type.String({ description: "ISO 8601 duration of a fixed window, e.g. PT1H" })),
    interval_hours: Type.Optional(Type.Number()),
    reset: Type.Optional(Type.String({ description: "since_reset: ISO 8601 duration between resets, e.g. PT6H" })),
    reset_hours: Type.Optional(Type.Number()),
    undecided_reason: Type.Optional(Type.String({ description: "undecided: why the window is not known" })),
    source: Type.Optional(
      Type.String({
        description:
          "Where the meaning comes from: registry, cell_methods, GRIB_stepType, step_type, or data (the values " +
          "showed resets, or could not settle the window)",
      }),
    ),
    description: Type.Optional(Type.String({ description: "In words, e.g. mean over the previous 3 h" })),
  },
  { description: "Whether a value is instantaneous or covers a window ending at its time" },
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

/**
 * In a group holding variables on several grids: which grid an answer was read on, named by the
 * stored latitude and longitude coordinates that key it (absent for a group on one grid).
 */
export const GridCoordinates = Type.Optional(
  Type.Object(
    {
      lat: Type.String({ description: "Stored name of the grid's latitude coordinate, e.g. latitude_wave or lat_1" }),
      lon: Type.String({ description: "Stored name of the grid's longitude coordinate" }),
    },
    {
      description:
        "Only for a group whose variables sit on several grids (cfgrib hypercubes merged, atmosphere and wave " +
        "fields in one dataset): the grid the variable is stored on, and so the grid its nodes, coverage and " +
        "values come from. /api/models lists a group's grids under `grids`.",
    },
  ),
);

export const Lat = Type.Number({ minimum: -90, maximum: 90, description: "Latitude in degrees north" });
export const Lon = Type.Number({
  minimum: -180,
  maximum: 360,
  description: "Longitude in degrees east; -180..180 and 0..360 are both accepted",
});
