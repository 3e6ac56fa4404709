import type { Hazard, JournalEntry, Resource, VesselDetailed } from '../../../generated/mapping/types.gen.ts';

/**
 * The survey of the coast of Newfoundland, 1763-1767: the vessels, hazards, journal and resources the
 * mapping API starts with. The vessels cover every status and every weather condition of the seed.
 */
export const VESSELS: readonly VesselDetailed[] = [
  { id: 'grenville', type: 'Survey schooner', crew: 18, status: 'Active', current_position: '47°34′N 52°42′W', heading: 'NNE', weather_conditions: 'Favorable' },
  { id: 'northumberland', type: 'Ship of the line', crew: 520, status: 'In-port', current_position: '46°48′N 71°12′W', heading: 'E', weather_conditions: 'Favorable' },
  { id: 'antelope', type: 'Fourth-rate frigate', crew: 280, status: 'Active', current_position: '47°33′N 52°43′W', heading: 'SE', weather_conditions: 'Challenging' },
  { id: 'guernsey', type: 'Fourth-rate ship', crew: 240, status: 'Damaged', current_position: '49°10′N 53°30′W', heading: 'W', weather_conditions: 'Dangerous' },
  { id: 'pembroke', type: 'Ship of the line', crew: 420, status: 'Repairs', current_position: '44°39′N 63°34′W', heading: 'N', weather_conditions: 'Challenging' },
  { id: 'lark', type: 'Sloop', crew: 90, status: 'Active', current_position: '47°05′N 55°09′W', heading: 'SW', weather_conditions: 'Dangerous' },
  { id: 'niger', type: 'Frigate', crew: 220, status: 'In-port', current_position: '47°34′N 52°41′W', heading: 'S', weather_conditions: 'Challenging' },
  { id: 'tweed', type: 'Frigate', crew: 200, status: 'Damaged', current_position: '51°22′N 55°35′W', heading: 'NW', weather_conditions: 'Favorable' },
  { id: 'spitfire', type: 'Sloop', crew: 60, status: 'Repairs', current_position: '47°34′N 52°42′W', heading: 'ENE', weather_conditions: 'Dangerous' },
];

export const HAZARDS: readonly Hazard[] = [
  { id: 'ferryland-shoal', name: 'Ferryland Shoal', kind: 'shoal', position: '47°01′N 52°51′W', severity: 'Medium', charted: '1763-07-14', charted_by: 'grenville', notes: 'Two fathoms at low water; breaks in a swell.' },
  { id: 'cape-race-rocks', name: 'Rocks off Cape Race', kind: 'rock', position: '46°39′N 53°04′W', severity: 'High', charted: '1763-08-02', charted_by: 'antelope' },
  { id: 'strait-ice', name: 'Ice in the Strait of Belle Isle', kind: 'ice', position: '51°35′N 56°20′W', severity: 'High', charted: '1764-06-10', charted_by: 'grenville', notes: 'Pack ice until late June.' },
  { id: 'placentia-current', name: 'Set into Placentia Bay', kind: 'current', position: '46°50′N 54°30′W', severity: 'Low', charted: '1765-08-21' },
  { id: 'grand-banks-fog', name: 'Fog over the Grand Banks', kind: 'fog', position: '45°00′N 51°00′W', severity: 'Medium', charted: '1766-05-30', charted_by: 'lark' },
];

export const JOURNAL: readonly JournalEntry[] = [
  { id: 'j-1763-06-14', date: '1763-06-14', author: 'James Cook', vessel: 'antelope', position: "St John's harbour", weather: 'Favorable', entry: "Arrived at St John's. Began the survey of the harbour and its approaches." },
  { id: 'j-1763-07-14', date: '1763-07-14', author: 'James Cook', vessel: 'grenville', position: 'Off Ferryland', weather: 'Challenging', entry: 'Sounded the shoal off Ferryland; two fathoms at low water.' },
  { id: 'j-1764-06-10', date: '1764-06-10', author: 'James Cook', vessel: 'grenville', position: 'Strait of Belle Isle', weather: 'Dangerous', entry: 'Ice obliged us to stand off. Charted its edge.' },
  { id: 'j-1766-08-05', date: '1766-08-05', author: 'James Cook', vessel: 'grenville', position: 'Burgeo Islands', weather: 'Favorable', entry: 'Observed the eclipse of the sun to fix the longitude.' },
];

export const RESOURCES: readonly Resource[] = [
  { id: 'biscuit', name: 'Ship biscuit', category: 'provisions', quantity: 4200, unit: 'lb', vessel: 'grenville' },
  { id: 'fresh-water', name: 'Fresh water', category: 'water', quantity: 30, unit: 'tun', vessel: 'grenville' },
  { id: 'spare-spars', name: 'Spare spars', category: 'timber', quantity: 6, unit: 'each', vessel: 'antelope' },
  { id: 'theodolite', name: 'Theodolite', category: 'instruments', quantity: 1, unit: 'each', vessel: 'grenville' },
];
