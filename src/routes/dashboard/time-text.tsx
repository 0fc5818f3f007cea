import { createContext, useContext } from "hono/jsx";

/**
 * The business's time zone while a dashboard page renders: the Layout provides it, so that every time on a page reads
 * in the owner's own time, and the page names the zone once (docs/decisions.md, The owner's dashboard).
 */
export const TimeZone = createContext("UTC");

const FORMATS = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone and precision, kept: building one is costly and pages show many times. */
function formatter(timeZone: string, precision: Precision) {
  const key = `${timeZone} ${precision}`;
  let format = FORMATS.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      day: "numeric",
      month: "short",
      year: "numeric",
      ...(precision === "day" ? {} : { hour: "2-digit", minute: "2-digit", hourCycle: "h23" as const }),
      ...(precision === "second" ? { second: "2-digit" } : {}),
    });
    FORMATS.set(key, format);
  }
  return format;
}

type Precision = "day" | "minute" | "second";

/** A stored ISO time as the owner reads it in `timeZone`: "5 Mar 2026, 14:06" (to the minute unless told). */
export const timeText = (at: string, timeZone: string, precision: Precision = "minute") =>
  formatter(timeZone, precision).format(new Date(at));

/** The same on a page, in the business's time zone, in a `<time>` element carrying the instant itself; `never` without. */
export function When(props: { at: string | null; precision?: Precision }) {
  const timeZone = useContext(TimeZone);
  if (props.at === null) return <>never</>;
  return <time datetime={props.at}>{timeText(props.at, timeZone, props.precision)}</time>;
}

/** The zone, named once on each page (the Layout's line under the title). */
export function ZoneNote() {
  return <p class="muted">Times are in {useContext(TimeZone).replaceAll("_", " ")} time.</p>;
}

/** An ISO 8601 instant in UTC as the service writes them (`2026-03-05T13:06:00.000Z`). */
const STORED_INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;

/**
 * A sentence the service stored with a time written into it (an endpoint's disabled reason, which partners read in
 * UTC through the API), each such time drawn by {@link When} in the business's zone.
 */
export function WithTimes(props: { text: string }) {
  const parts: Array<string | ReturnType<typeof When>> = [];
  let from = 0;
  for (const match of props.text.matchAll(STORED_INSTANT)) {
    parts.push(props.text.slice(from, match.index), <When at={match[0]} precision="second" />);
    from = match.index + match[0].length;
  }
  parts.push(props.text.slice(from));
  return <>{parts}</>;
}
