ALTER TABLE `jobs` ADD `source_deleted_at` text;--> statement-breakpoint
CREATE INDEX `jobs_source_key` ON `jobs` (`source_key`);