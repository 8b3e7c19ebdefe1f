/** The SRID a shapefile's .prj (WKT1, ESRI WKT or WKT2) names. */

/** The top-level AUTHORITY["EPSG","n"] / ID["EPSG",n] (the last one, followed only by closing brackets). */
const TOP_AUTHORITY = /(?:AUTHORITY|ID)\[\s*"EPSG"\s*,\s*"?(\d+)"?\s*\]\s*\]\s*$/i;

/** ESRI and OGC names of common CRSs (checked on the root's name). */
const KNOWN_NAMES: [RegExp, number][] = [
  [
    /web_mercator_auxiliary_sphere|popular[ _]visuali[sz]ation|pseudo[ _-]mercator|^wgs_1984_web_mercator/i,
    3857,
  ],
  [/^(gcs_wgs_1984|wgs[ _]?84|wgs_1984)$/i, 4326],
  [/^(gcs_etrs_1989|etrs[ _]?89)$/i, 4258],
  [/^(gcs_north_american_1983|nad[ _]?83)$/i, 4269],
];

/** "WGS 84 / UTM zone 32N", "WGS_1984_UTM_Zone_32N". */
const WGS84_UTM = /^wgs[ _]?(?:19)?84[ _/]*utm[ _]zone[ _](\d{1,2})([NS])$/i;

/** The SRID the .prj text names; null when it names none GeoPlane recognises. */
export const sridOfPrj = (prj: string): number | null => {
  const text = prj.trim();
  const authority = TOP_AUTHORITY.exec(text);
  if (authority) return Number(authority[1]);
  const root = /^(PROJCS|GEOGCS|PROJCRS|GEOGCRS|GEODCRS)\s*\[\s*"([^"]*)"/i.exec(text);
  if (!root) return null;
  const name = (root[2] ?? '').trim();
  const utm = WGS84_UTM.exec(name);
  if (utm) {
    const zone = Number(utm[1]);
    if (zone >= 1 && zone <= 60) return (utm[2]?.toUpperCase() === 'N' ? 32600 : 32700) + zone;
  }
  for (const [pattern, srid] of KNOWN_NAMES) if (pattern.test(name)) return srid;
  return null;
};
