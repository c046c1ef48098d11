/** The bundled partner API simulator: start it with `startSimulator`, generate bookings with `fullBooking`. */
export {
  bookingTypeOf,
  fullBooking,
  type SimFullBooking,
  type SimSummaryBooking,
  SOURCE_PLATFORMS,
  sourcePlatformOf,
  summaryOf,
} from "./bookings.js";
export { Dataset } from "./dataset.js";
export { PROXY_502_HTML } from "./responses.js";
export {
  type Behaviour,
  type Simulator,
  type SimulatorOptions,
  type SimulatorStats,
  startSimulator,
} from "./server.js";
