-- The collision radar: two agents sharing a project overlap when their
-- statuses name the same repository and branch. repo_key is the status's repo
-- as store/repo.Normalize names it (acme/shop for https://github.com/Acme/Shop.git),
-- written with repo by every set_status; a status written before this
-- migration gets its key at its agent's next set_status.
ALTER TABLE statuses ADD COLUMN repo_key text CHECK (char_length(repo_key) BETWEEN 1 AND 300);
CREATE INDEX statuses_radar_idx ON statuses (repo_key, branch, updated_at)
    WHERE repo_key IS NOT NULL AND branch IS NOT NULL;
