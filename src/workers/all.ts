// Importing this module registers every background loop (one import per loop).
import './dynamic-lists.js';
export {};
