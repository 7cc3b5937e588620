/**
 * The model NIC's hardware thread: pins itself to hw_cpu when given, opens
 * the heap and polls (runHardware) until the last nicsim port stops.
 */
import { workerData } from 'node:worker_threads';
import { pinThisThread } from '../../eal/affinity.js';
import { Heap } from '../../eal/heap.js';
import { HW_LCORE, runHardware, type HwJob } from './hw.js';

const job = workerData as HwJob;
pinThisThread(job.cpus);
runHardware(Heap.attach(job.heap, HW_LCORE, job.datapath), job.device);
