# rename.sed — the symbol renames that split the loaded-file API from the profiler's.
# Apply to C sources, headers, CMake files and docs:  sed -i -E -f tests/layers/rename.sed FILES
# (kept for re-applying to code written before the rename; src/format/profile.c became src/format/file.c).
# The loaded-file API (format.h) is eph_file_*; eph_profile_* is the profiler only.
s/\beph_profile_load_buffer_with\b/eph_file_load_buffer_with/g
s/\beph_profile_load_buffer\b/eph_file_load_buffer/g
s/\beph_profile_load_with\b/eph_file_load_with/g
s/\beph_profile_load\b/eph_file_load/g
s/\beph_profile_meta\b/eph_file_meta/g
s/\beph_profile_free\b/eph_file_free/g
s/\beph_profile\b/eph_file/g
# Internals, one prefix per library: heap ephh_, sampling ephs_, format ephf_ (already), profiler prof_, Lua lt_ (already).
s/\beph_sampling_(rng_init|rng|next_u64|unit|count_gap|byte_gap|byte_weight)\b/ephs_\1/g
s/\beph_(alloc_general|checking|class_matches|cpu_ns|eden_walk_after_gc|eden_walk_free|eden_walk_note_old|eden_walk_on|ephemeron_fixed_slots|evacuate_young|exit_finalizers|fatal|full_forward|full_gc|full_is_marked|gc_begin|gc_end|heap_used|in_eden|in_old|in_space|init_object|is_live_ephemeron|mourn|new_space_init|new_space_release|next_object|note_committed|notify_alloc_observer|now_ns|object_total|old_alloc_gc|old_alloc_mutator|old_counted|old_limit|old_space_init|old_space_resize_after_full|old_used|os_commit|os_decommit|os_page_size|os_release|os_reserve|poison|raise|remset_add|round_up|safepoint|sample_arm|sample_point_slow|scavenge|set_error|set_full_threshold|span|update_alloc_limit|vec_grow|vec_push|verify_after_gc)\b/ephh_\1/g
s/\b(clocks_(note_gc|point|stamp_at_slow|start|tick|wall_in|stamp_in|stamp_with|stamp_at))\b/prof_\1/g
s/\b(sampler_(arm|take|take_walked|walk_arm|walks|walk_draw|class_state|weight))\b/prof_\1/g
s/\b(fin_mode_(after_full_gc|before_stop|collect_at_stop|start|stop|track))\b/prof_\1/g
s/\b(gc_mode_(collect|free|start|stop|track)|gc_keep_survivor|gc_walk_on_alloc|gc_walk_start|gc_settle_eden|gc_eden_free|gc_eden_memory)\b/prof_\1/g
s/\b(merlin_(mode_start|mode_stop|note_gc|on_alloc|on_collect|on_gc_start|on_store))\b/prof_\1/g
s/\b(class_list_next|site_cache_entry)\b/prof_\1/g
