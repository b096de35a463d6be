CREATE TABLE `job_sources` (
	`job_id` text NOT NULL,
	`source_key` text NOT NULL,
	PRIMARY KEY(`job_id`, `source_key`),
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `job_sources_source_key` ON `job_sources` (`source_key`);--> statement-breakpoint
DROP INDEX `jobs_source_key`;--> statement-breakpoint
-- Jobs made before this table record their main source (jobs.source_key). A try-on's garment was
-- known only to its runner, so an older try-on's garment cannot be recorded here.
INSERT INTO `job_sources` (`job_id`, `source_key`) SELECT `id`, `source_key` FROM `jobs`;
